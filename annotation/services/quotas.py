"""Per-annotator quotas (Membership.project_quota, task_quota): the most pairs a member may
take, rated or held, in the whole project and in each task (what counts:
annotation/selectors/quotas.py).

Concurrency: the claim (annotation/services/assignments.py) calls `quota_reached` first in
its transaction, before it locks any pair, so the lock order stays membership → pair →
assignment. With a quota the member's membership row is locked: two claims of the same
member (two tabs) count one after the other and never both take the last pair of the quota.
"""

from datetime import datetime

from django.contrib.auth.models import User

from annotation.selectors.quotas import quota_counted
from projects.access import claimer_quotas
from projects.models import Membership, Task


def quota_reached(user: User, task: Task, now: datetime) -> bool:
    """Whether the member may take no more pairs in `task` (call inside the claim's
    transaction, before any pair is locked). No query without a quota when the task came
    from `task_for_annotator` or `task_of_assignment`, which read the member's quotas with
    the task (projects.access.claimer_quotas); one otherwise; four with a quota."""
    quotas = claimer_quotas(task, user.pk)
    if quotas is None:
        quotas = (
            Membership.objects.filter(user=user, project_id=task.project_id)
            .values_list("project_quota", "task_quota")
            .first()
        ) or (None, None)
    if quotas == (None, None):
        return False
    # Locked and read again: a lead may have changed the quota since the page read it.
    project_quota, task_quota = (
        Membership.objects.select_for_update()
        .filter(user=user, project_id=task.project_id)
        .values_list("project_quota", "task_quota")
        .first()
    ) or (None, None)
    taken = quota_counted(user, task.project_id, now)
    if project_quota is not None and taken.count() >= project_quota:
        return True
    return task_quota is not None and taken.filter(pair__task=task).count() >= task_quota
