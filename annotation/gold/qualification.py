"""Qualification: a task may require each annotator to answer its qualification
set (gold pairs marked for it) before its real queue. Each answer is followed by feedback (the
expected side and the lead's explanation); the result is decided once the set is answered,
and kept: passing admits the annotator, failing holds them back until a lead admits them."""

from enum import Enum
from typing import Final, Literal

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import QuerySet

from annotation.models import Assignment, Qualification, Rating
from content.models import Pair
from projects.models import Task
from projects.scale import answers_expected_side


class _Held(Enum):
    HELD = "held"


HELD: Final = _Held.HELD  # the annotator failed the qualification: no real pair for them


def _qualification_golds(task: Task) -> QuerySet[Pair]:
    return Pair.objects.filter(task=task, status=Pair.Status.GOLD, gold__qualification=True)


def qualification_next(user: User, task: Task) -> int | Literal[_Held.HELD] | None:
    """None when the annotator may take real pairs; HELD when they failed; otherwise the id of
    the next qualification pair for them. Decides and keeps the result once every pair of the
    set was handed to them."""
    if not task.qualification_required:
        return None
    result = Qualification.objects.filter(task=task, annotator=user).first()
    if result is not None:
        return None if result.passed else HELD
    golds = _qualification_golds(task)
    next_id = (
        golds.exclude(assignments__annotator=user).order_by("id").values_list("pk", flat=True)
    ).first()
    if next_id is not None:
        return next_id
    handed = Assignment.objects.filter(annotator=user, pair__in=golds).count()
    if handed == 0:
        return None  # the task has no qualification set yet: nothing to hold anyone to
    correct = sum(
        answers_expected_side(*answer)
        for answer in Rating.objects.filter(annotator=user, pair__in=golds).values_list(
            "overall", "scale", "pair__gold__side"
        )
    )  # a skipped qualification pair counts as answered wrong
    passed = correct / handed >= task.qualification_pass
    try:
        with transaction.atomic():
            Qualification.objects.create(
                task=task, annotator=user, correct=correct, answered=handed, passed=passed
            )
    except IntegrityError:
        pass  # decided by a concurrent claim of the same annotator: the same result
    return None if passed else HELD


def qualification_admit(task: Task, annotator_id: int, *, by: User) -> bool:
    """A lead admits an annotator who failed the qualification (the result stays on record).
    `by`: the lead who admits them."""
    return bool(
        Qualification.objects.filter(task=task, annotator_id=annotator_id, passed=False).update(
            passed=True, admitted_by=by
        )
    )
