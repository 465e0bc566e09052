"""Removing a task from sight: delete an empty one, archive (and restore) one with data.

Rules:
- A task with no pairs can be deleted (a mistyped upload's task). A task with pairs cannot:
  its ratings and figures stay, so it is archived instead.
- Deleting never widens anyone's access: a membership or an open invitation limited to this
  task alone would, without it, cover every task of the project (an empty list means all), so
  the deletion is refused until the lead changes those members' tasks.
- An archived task keeps everything it holds and stays in the exports (unless an export asks
  to leave archived tasks out), but annotators no longer see it on their home page or claim
  its pairs, the members' forms no longer offer it, and imports refuse it
  (imports/services/pair_import.py). Restoring undoes all of that.

Concurrency: imports lock the project's row (`SELECT … FOR UPDATE`) before they create a task
or write pairs into it; these services take the same lock first, so a deletion and an import
into the same task take turns, and the "no pairs" check holds when the row goes.
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count
from django.utils import timezone
from django.utils.translation import gettext, ngettext

from core.errors import Refused
from projects.models import Invitation, Membership, Project, Task
from projects.models.invitation import open_at


def _locked(project: Project, task: Task) -> Task:
    Project.objects.select_for_update().filter(pk=project.pk).first()
    locked: Task = Task.objects.select_for_update().get(pk=task.pk, project=project)
    return locked


@transaction.atomic
def task_delete(*, project: Project, task: Task) -> None:
    """Delete a task that holds no pairs; `Refused` when it holds some or when deleting it
    would open every task to a member limited to it alone."""
    task = _locked(project, task)
    if task.pairs.exists():
        raise Refused(
            gettext("Task %(name)s holds pairs, so it cannot be deleted; archive it instead.")
            % {"name": task.name}
        )
    alone = (
        Membership.objects.filter(project=project, tasks=task)
        .annotate(named=Count("tasks"))
        .filter(named=1)
        .count()
    )
    invited = (
        Invitation.objects.filter(open_at(timezone.now()), project=project, tasks=task)
        .annotate(named=Count("tasks"))
        .filter(named=1)
        .count()
    )
    if alone or invited:
        who = []
        if alone:
            who.append(ngettext("%(count)s member", "%(count)s members", alone) % {"count": alone})
        if invited:
            who.append(
                ngettext("%(count)s open invitation", "%(count)s open invitations", invited)
                % {"count": invited}
            )
        raise Refused(
            gettext(
                "Task %(name)s is the only task of %(who)s; without it they would cover every "
                "task. Change their tasks on the members page first, or archive it."
            )
            % {"name": task.name, "who": gettext(" and ").join(who)}
        )
    task.delete()


@transaction.atomic
def task_archive(*, project: Project, task: Task, user: User) -> Task:
    """Archive the task (idempotent: an archived task keeps its first archiving time)."""
    task = _locked(project, task)
    if task.archived_at is None:
        task.archived_at = timezone.now()
        task.archived_by = user
        task.save(update_fields=["archived_at", "archived_by"])
    return task


@transaction.atomic
def task_restore(*, project: Project, task: Task) -> Task:
    """Bring an archived task back to annotators and imports (idempotent)."""
    task = _locked(project, task)
    if task.archived_at is not None:
        task.archived_at = None
        task.archived_by = None
        task.save(update_fields=["archived_at", "archived_by"])
    return task
