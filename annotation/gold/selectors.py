"""Reads about quality control: an annotator's gold history (the schedule's
input), the feedback after a qualification answer, and why a task holds an annotator back."""

from functools import reduce
from operator import or_

from django.contrib.auth.models import User
from django.db.models import Count, Max, Q
from django.utils.translation import gettext as _

from annotation.models import AnnotatorPause, Assignment, Qualification, Rating
from content.models import Pair
from projects.models import Task
from projects.scale import answers_expected_side, side_of
from projects.scale import center as scale_center


def qualification_feedback(user: User, assignment_id: int) -> str | None:
    """After a qualification answer: the expected side and the lead's explanation, in the
    Left/Right terms the annotator saw (None for any other pair: mixed gold checks stay
    unannounced)."""
    row = (
        Rating.objects.filter(
            assignment_id=assignment_id,
            annotator=user,
            pair__status=Pair.Status.GOLD,
            pair__gold__qualification=True,
        )
        .values_list(
            "overall", "scale", "assignment__swapped", "pair__gold__side", "pair__gold__explanation"
        )
        .first()
    )
    if row is None:
        return None
    overall, scale, swapped, expected, explanation = row

    def shown(side: str) -> str:
        left, right = _("Left"), _("Right")
        return {"A": right if swapped else left, "B": left if swapped else right}[side]

    given = side_of(overall, scale_center(scale))
    right = answers_expected_side(overall, scale, expected)
    verdict = _("Right answer") if right else _("Not the expected answer")
    if given:
        chose = _("you preferred %(side)s") % {"side": shown(given)}
    else:
        chose = _("you rated them about the same")
    note = f" {explanation}" if explanation else ""
    feedback = _("Qualification: %(verdict)s: %(side)s is better; %(chose)s.") % {
        "verdict": verdict,
        "side": shown(expected),
        "chose": chose,
    }
    return feedback + note


def task_hold_reason(user: User, task: Task) -> str | None:
    """Why the annotator gets no pair of the task although some may be left: a pause after
    failed gold checks, or a failed qualification (None when neither holds them)."""
    if AnnotatorPause.objects.filter(
        task=task, annotator=user, readmitted_at__isnull=True
    ).exists():
        return _(
            "Your access to this task is paused after its quality checks. Your ratings are "
            "kept; a lead will review them and can re-admit you."
        )
    failed = Qualification.objects.filter(task=task, annotator=user, passed=False).first()
    if failed is not None:
        return _(
            "You answered %(correct)d of %(answered)d qualification pairs as expected, below "
            "what this task asks. A lead can admit you."
        ) % {"correct": failed.correct, "answered": failed.answered}
    return None


def gold_history(user: User, task: Task) -> tuple[int, int, int | None]:
    """(pairs handed to the annotator in the task's queue, gold checks among them, pairs since
    the latest gold check or None): what annotation.gold.schedule decides from."""
    return gold_histories(user, [task]).get(task.pk, (0, 0, None))


def gold_histories(user: User, tasks: list[Task]) -> dict[int, tuple[int, int, int | None]]:
    """gold_history of several tasks in two queries whatever their number."""
    mine = Assignment.objects.filter(annotator=user, pair__task__in=tasks).exclude(
        pair__gold__qualification=True
    )  # the qualification set comes before the queue, outside its count
    is_gold = Q(pair__status=Pair.Status.GOLD)
    rows = (
        mine.values("pair__task")
        .annotate(all=Count("id"), gold=Count("id", filter=is_gold), last=Max("id", filter=is_gold))
        .values_list("pair__task", "all", "gold", "last")
        .order_by()
    )
    histories = {task_id: (n, golds, last) for task_id, n, golds, last in rows}
    since: dict[int, int] = {}
    after_last = [Q(pair__task=t, id__gt=last) for t, (_n, _g, last) in histories.items() if last]
    if after_last:  # ids grow with time: the pairs handed out after each task's latest check
        since = dict(
            mine.filter(reduce(or_, after_last))
            .values("pair__task")
            .annotate(n=Count("id"))
            .values_list("pair__task", "n")
            .order_by()
        )
    return {
        task_id: (n, golds, None if last is None else since.get(task_id, 0))
        for task_id, (n, golds, last) in histories.items()
    }
