"""An annotator's progress per task: rated, skipped and remaining, and the next task."""

from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Count, Q

from annotation.gold.schedule import golds_ahead
from annotation.gold.selectors import gold_histories
from annotation.models import Assignment
from annotation.selectors.assignments import FINISHED_STATUSES
from annotation.selectors.pairs import claimable_pairs
from annotation.selectors.quotas import quota_room
from content.lifecycle import RATEABLE_STATUSES
from content.models import Pair
from projects.access import tasks_for_membership
from projects.models import Membership, Task


@dataclass(frozen=True)
class TaskProgress:
    task: Task
    done: int  # pairs this annotator rated
    remaining: int  # pairs still open to them (within their quota)
    skipped: int = 0  # pairs they skipped or flagged: finished too, but not rated
    quota_limited: bool = False  # their quota leaves them fewer pairs than are open

    @property
    def finished(self) -> int:
        return self.done + self.skipped

    @property
    def total(self) -> int:
        return self.finished + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 100


def annotator_progress(
    user: User, tasks: list[Task], now: datetime, *, quota_room: dict[int, int] | None = None
) -> list[TaskProgress]:
    """Rated, skipped and remaining per task, in a fixed number of queries whatever the number
    of tasks (two; one more when a task serves gold checks, and two more when some are
    ahead). `quota_room` (annotation/selectors/quotas.py) caps what remains of a task at the
    pairs the member holds and the room their quota leaves."""
    if not tasks:
        return []
    # Finished and leased in one query (a lease counts only while its pair can be rated).
    counts: dict[tuple[int, str], int] = {}
    for task_id, status, n, rateable in (
        Assignment.objects.filter(
            annotator=user,
            status__in=(*FINISHED_STATUSES, Assignment.Status.LEASED),
            pair__task__in=tasks,
        )
        .values("pair__task", "status")
        .annotate(n=Count("id"), rateable=Count("id", filter=Q(pair__status__in=RATEABLE_STATUSES)))
        .values_list("pair__task", "status", "n", "rateable")
    ):
        counts[task_id, status] = rateable if status == Assignment.Status.LEASED else n
    claimable = dict(
        claimable_pairs(user, now)
        .filter(task__in=tasks)
        .values("task")
        .annotate(n=Count("id"))
        .values_list("task", "n")
    )
    serving_gold = [task for task in tasks if task.gold_rate > 0 and claimable.get(task.pk)]
    gold_left = (
        dict(
            Pair.objects.filter(
                task__in=serving_gold, status=Pair.Status.GOLD, gold__qualification=False
            )
            .exclude(assignments__annotator=user)
            .values("task")
            .annotate(n=Count("id"))
            .values_list("task", "n")
        )
        if serving_gold
        else {}
    )
    # The gold checks still ahead, counted in "of N" so that the total does not move when one
    # is served (a tell): the histories of the tasks that have some, in two queries.
    with_gold = [task for task in serving_gold if gold_left.get(task.pk)]
    histories = gold_histories(user, with_gold) if with_gold else {}

    def ahead(task: Task) -> int:
        if task not in with_gold:
            return 0
        position, golds_so_far, since_last = histories.get(task.pk, (0, 0, None))
        return golds_ahead(
            user.pk, task, position, golds_so_far, since_last,
            claimable[task.pk], gold_left[task.pk],
        )  # fmt: skip

    def row(task: Task) -> TaskProgress:
        held = counts.get((task.pk, Assignment.Status.LEASED), 0)
        remaining = claimable.get(task.pk, 0) + held + ahead(task)
        allowed = held + (quota_room or {}).get(task.pk, remaining)
        return TaskProgress(
            task,
            done=counts.get((task.pk, Assignment.Status.SUBMITTED), 0),
            remaining=min(remaining, allowed),
            skipped=counts.get((task.pk, Assignment.Status.SKIPPED), 0),
            quota_limited=allowed < remaining,
        )

    return [row(task) for task in tasks]


def next_task_for(user: User, task: Task, now: datetime) -> TaskProgress | None:
    """Another task of the same project with pairs left for this annotator (the first by
    name), for the end of a task."""
    membership = Membership.objects.filter(user=user, project_id=task.project_id).first()
    if membership is None:
        return None
    others = [other for other in tasks_for_membership(membership) if other.pk != task.pk]
    for other in others:
        other.project = task.project
    room = quota_room(user, membership, others, now)
    progress = annotator_progress(user, others, now, quota_room=room)
    return next((row for row in progress if row.remaining), None)
