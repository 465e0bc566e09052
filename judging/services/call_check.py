"""A judge's test call, from its settings page: ONE request through the judge's backend on a
tiny built-in pair (a pointwise template: its right response alone), to learn before a run
whether the connection answers and the answer parses.

Nothing is written: no verdict, no run, no stored template row. The result carries the parsed
answer or the error as the backends word it (an HTTP status and its standard phrase, or the
class of a connection error), never the reply's text (SECURITY.md). One test call per judge
per CALL_SPACING_SECONDS, counted in the cache (shared by every worker when it is Redis), so
the button cannot be used to hammer a provider.
"""

import asyncio
import time
from dataclasses import dataclass

from django.core.cache import cache
from django.utils.translation import gettext

from core.errors import Refused
from core.outbound import client_session
from judging.backends import CallFailed, ConfigurationError, call_backend, check_callable
from judging.models import POINTWISE_SCALES, Judge, PromptTemplate
from judging.parsing import INVALID, parse_answer, parse_score
from judging.prompts import BUILT_IN, build_message, build_pointwise_message, template_name
from projects.models import Project

CALL_SPACING_SECONDS = 5
# A page waits for the answer: a judge's own timeout (up to 600 s) would hold a web worker.
CALL_TIMEOUT_SECONDS = 30.0
SAMPLE_PROMPT = [("text", "What is 2 + 2? Answer with the number only.")]
SAMPLE_FIRST = [("text", "4")]
SAMPLE_SECOND = [("text", "5")]
SAMPLE_RIGHT = "A"  # the first response is the right one
SAMPLE_RIGHT_RESPONSE = SAMPLE_FIRST  # what a pointwise template's check scores


class CallCheckRefused(Refused):
    """A test call of the same judge was made a moment ago."""


@dataclass(frozen=True)
class CallCheck:
    answer: str = ""  # A | B | tie | invalid, when the call answered
    error: str = ""
    # A pointwise template's check scores the right response alone: its score and the scale.
    score: float | None = None
    scale: tuple[int, int] | None = None
    template: str = ""  # the template's name, the one the judge uses for the kind
    seconds: float = 0.0
    input_tokens: int | None = None
    output_tokens: int | None = None

    @property
    def right(self) -> bool:
        return self.answer == SAMPLE_RIGHT


def _template(judge: Judge, project: Project) -> tuple[str, str, str]:
    """(name, answer format, body) of the template the judge uses for the project's first
    task kind, read without storing anything."""
    task = project.tasks.order_by("slug").first()
    name = template_name(judge, task.kind if task else "other")
    own = PromptTemplate.objects.filter(project=project, name=name).order_by("-version").first()
    if own is not None:
        return name, own.answer_format, own.body
    if name not in BUILT_IN:
        raise ConfigurationError(f"template {name!r} does not exist in this project")
    answer_format, body = BUILT_IN[name]
    return name, answer_format, body


async def _call(judge: Judge, message, answer_format: str):
    seconds = min(judge.timeout_seconds, CALL_TIMEOUT_SECONDS)
    async with client_session(total_seconds=seconds) as session:
        return await call_backend(session, judge, message, 0, "call-check", answer_format)


def judge_call_check(*, judge: Judge, project: Project) -> CallCheck:
    """Make one call of the judge on the sample pair (forward order). Raises CallCheckRefused
    when the judge was tested less than CALL_SPACING_SECONDS ago."""
    if not cache.add(f"judge-call-check:{judge.pk}", 1, timeout=CALL_SPACING_SECONDS):
        raise CallCheckRefused(
            gettext("judge %(name)s was tested a moment ago; try again in a few seconds")
            % {"name": repr(judge.name)}
        )
    try:
        check_callable(judge, project)  # also loads the connection before the event loop
        name, answer_format, body = _template(judge, project)
    except ConfigurationError as problem:
        return CallCheck(error=str(problem))
    scale = POINTWISE_SCALES.get(answer_format)
    if scale:
        message = build_pointwise_message(body, SAMPLE_PROMPT, SAMPLE_RIGHT_RESPONSE)
    else:
        message = build_message(body, SAMPLE_PROMPT, SAMPLE_FIRST, SAMPLE_SECOND)
    started = time.perf_counter()
    try:
        reply = asyncio.run(_call(judge, message, answer_format))
    except (CallFailed, ConfigurationError) as failure:
        return CallCheck(error=str(failure), template=name)
    score = parse_score(reply.text, *scale) if scale else None
    if scale:
        answer = INVALID if score is None else "score"
    else:
        answer = parse_answer(reply.text, answer_format)
    return CallCheck(
        answer=answer,
        score=score,
        scale=scale,
        template=name,
        seconds=time.perf_counter() - started,
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
    )
