"""What counts against a member's quotas (Membership.project_quota, task_quota) and the room
left under them, for the claim (annotation/services/quotas.py) and for the pages that say how
many pairs are left (home, the end of a task).

Counted: the member's assignments that hold a slot (rated, or in progress and not expired) of
the project's pairs, gold checks and the qualification set aside (the leads' checks, not
work); skipped or expired ones gave the pair back to the pool.
"""

from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Count, QuerySet
from django.utils.translation import gettext as _

from annotation.models import Assignment
from annotation.selectors.pairs import live_assignments
from content.models import Pair
from projects.models import Membership, Task


def quota_counted(user: User, project_id: int, now: datetime) -> QuerySet[Assignment]:
    """The member's assignments that count against their quotas in the project."""
    return (
        Assignment.objects.filter(live_assignments(now), annotator=user)
        .filter(pair__project_id=project_id)
        .exclude(pair__status=Pair.Status.GOLD)
    )


def quota_room(
    user: User, membership: Membership, tasks: list[Task], now: datetime
) -> dict[int, int]:
    """How many more pairs the member may take in each task under their quotas, by task id;
    empty without a quota (no query then; one with a quota, whatever the number of tasks)."""
    project_quota, task_quota = membership.project_quota, membership.task_quota
    if project_quota is None and task_quota is None:
        return {}
    taken = dict(
        quota_counted(user, membership.project_id, now)
        .values("pair__task")
        .annotate(n=Count("id"))
        .values_list("pair__task", "n")
    )
    room = {}
    for task in tasks:
        limits = []
        if project_quota is not None:
            limits.append(project_quota - sum(taken.values()))
        if task_quota is not None:
            limits.append(task_quota - taken.get(task.pk, 0))
        room[task.pk] = max(0, min(limits))
    return room


def quota_reached_note(user: User, task: Task, now: datetime) -> str | None:
    """Why the member gets no more pairs of the task though some are left: their quota, in
    words (None when no quota holds them back)."""
    membership = Membership.objects.filter(user=user, project_id=task.project_id).first()
    if membership is None or quota_room(user, membership, [task], now).get(task.pk, 1) > 0:
        return None
    if membership.task_quota is not None and (
        quota_counted(user, task.project_id, now).filter(pair__task=task).count()
        >= membership.task_quota
    ):
        return _(
            "You have taken %(quota)d pairs of this task, the most its leads set for you. "
            "A lead can raise your quota."
        ) % {"quota": membership.task_quota}
    return _(
        "You have taken %(quota)d pairs of this project, the most its leads set for you. "
        "A lead can raise your quota."
    ) % {"quota": membership.project_quota}
