"""The pair an annotator will most likely be handed after the one they rate, read without
claiming it: the annotate page preloads its images while they rate (static/prefetch.js), so
that Enter shows the next pair at once.

A guess, never a promise, and no write: no lease, no slot, no state of any pair changes. The
claim (annotation/services/assignments.py) still decides at submit time, with the pair row
locked; an older lease of theirs, a pause, or another annotator's claim in between make the
guess wrong, and then the preloaded images are merely unused. The guess comes from the same
queryset and order as the claim, so it is a pair the annotator may be shown anyway
(annotation.access.pairs_showing_images_to: the open pairs and gold checks of the tasks their
membership covers).

A gold check is guessed exactly as the claim serves it (annotation/gold/due.py, the
one rule for both): were it never preloaded, a pair that shows up without having been preloaded
(the browser's network panel tells) would give a gold check away."""

import re
from datetime import datetime

from django.contrib.auth.models import User
from django.http import Http404

from annotation.access import own_assignments
from annotation.gold.due import gold_pair_due
from annotation.models import Assignment, Qualification
from annotation.selectors.pairs import claimable_pairs, in_claim_order
from content.models import Pair
from projects.access import covers_task
from projects.models import Task

UPCOMING_IMAGES = 12  # preloaded at most: a long interleaved pair need not come whole
_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def upcoming_images(user: User, assignment_id: int, now: datetime) -> list[str]:
    """The hashes of the images (prompt's, then both responses') of the pair the claim would
    most likely hand the user after this assignment (a gold check when one will be due),
    at most UPCOMING_IMAGES; [] when no next pair follows it (the assignment is no lease, the
    task is archived, nothing is left) and for every pair while the task's qualification set
    still stands before the user (which pair, or whether any, follows then hangs on their
    answers; announced pairs, nothing to hide, and one constant answer for all of them leaks
    nothing, not even the result). Http404 unless the assignment is the user's own, exactly
    as for a missing one."""
    assignment = (
        own_assignments(user).filter(pk=assignment_id).select_related("pair__task__project").first()
    )
    if assignment is None:
        raise Http404("no such assignment")
    task = assignment.pair.task
    if assignment.status != Assignment.Status.LEASED or task.archived_at is not None:
        return []
    if task.qualification_required and _qualifying(user, task):
        return []
    # claimable_pairs leaves out every pair the user ever had, the current one included.
    candidates = claimable_pairs(user, now).filter(covers_task(user, task="task"), task=task)
    fields = ("prompt__content", "response_a__content", "response_b__content")
    contents = in_claim_order(candidates, task).values_list(*fields).first()
    if contents is None:  # nor a gold check: the claim mixes them only into real work
        return []
    # The claim after the submission sees the history seen now: every pair handed out counts,
    # the current one too, leased now as rated then (annotation.gold.selectors.gold_history).
    gold_pair_id = gold_pair_due(user, task)
    if gold_pair_id is not None:
        contents = Pair.objects.filter(pk=gold_pair_id).values_list(*fields).first() or ()
    shas = [
        value
        for content in contents
        for kind, value in content or []
        if kind == "image" and isinstance(value, str) and _SHA256.match(value)
    ]
    return list(dict.fromkeys(shas))[:UPCOMING_IMAGES]  # in page order, each once


def _qualifying(user: User, task: Task) -> bool:
    """Whether the task's qualification still stands before the user, as
    annotation.gold.qualification.qualification_next sees it: no result of theirs yet and
    a qualification set to answer; or a failed result (held: nothing follows)."""
    results = Qualification.objects.filter(task=task, annotator=user)
    passed = results.values_list("passed", flat=True).first()
    if passed is not None:
        return not passed
    qualification_set = Pair.objects.filter(
        task=task, status=Pair.Status.GOLD, gold__qualification=True
    )
    return qualification_set.exists()
