"""Judging's domain errors (core/errors.py says how each answers)."""

from core.errors import Refused


class RunRefused(Refused):
    """The run cannot change state now (cancel a finished run, resume a running one); the
    message says why, for the user (409)."""


class RunCannotStart(RunRefused):
    """The run cannot start as asked: the judge, task, samples or mode chosen (a judge that
    cannot call, no pairs in the selection, a template missing). The request's fault, so a
    400 like any input error; still a RunRefused for the callers that catch every refusal
    of a run (the commands, the ensemble filter)."""

    status = 400
