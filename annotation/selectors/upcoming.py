"""The pair an annotator will most likely be handed after the one they rate, read without
claiming it: the annotate page preloads its images while they rate (static/prefetch.js), so
that Enter shows the next pair at once (issue 29).

A guess, never a promise, and no write: no lease, no slot, no state of any pair changes. The
claim (annotation/services/assignments.py) still decides at submit time, with the pair row
locked; a gold check that falls due, an older lease of theirs, a pause, or another annotator's
claim in between make the guess wrong, and then the preloaded images are merely unused. The
guess comes from the same queryset and order as the claim, so it is a pair the annotator may be
shown anyway (annotation.access.pairs_showing_images_to: the open pairs of the tasks their
membership covers)."""

import re
from datetime import datetime

from django.http import Http404

from annotation.access import own_assignments
from annotation.models import Assignment
from annotation.selectors.pairs import claimable_pairs, in_claim_order
from projects.access import covers_task

UPCOMING_IMAGES = 12  # preloaded at most: a long interleaved pair need not come whole
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def upcoming_images(user, assignment_id: int, now: datetime) -> list[str]:
    """The hashes of the images (prompt's, then both responses') of the pair the claim would
    most likely hand the user after this assignment, at most UPCOMING_IMAGES; [] when no next
    pair follows it (the assignment is no lease, the task is archived, nothing is left).
    Http404 unless the assignment is the user's own, exactly as for a missing one."""
    assignment = (
        own_assignments(user).filter(pk=assignment_id).select_related("pair__task__project").first()
    )
    if assignment is None:
        raise Http404("no such assignment")
    task = assignment.pair.task
    if assignment.status != Assignment.Status.LEASED or task.archived_at is not None:
        return []
    # claimable_pairs leaves out every pair the user ever had, the current one included.
    candidates = claimable_pairs(user, now).filter(covers_task(user, task="task"), task=task)
    contents = (
        in_claim_order(candidates, task)
        .values_list("prompt__content", "response_a__content", "response_b__content")
        .first()
    )
    if contents is None:
        return []
    shas = [
        value
        for content in contents
        for kind, value in content or []
        if kind == "image" and isinstance(value, str) and _SHA256.match(value)
    ]
    return list(dict.fromkeys(shas))[:UPCOMING_IMAGES]  # in page order, each once
