"""Reads of an annotator's own assignments: the lease they hold, a pair's place in their
sequence, the annotate page's assignment, their recent ratings, the skip they may undo."""

from datetime import datetime
from typing import TYPE_CHECKING, TypedDict

from django.contrib.auth.models import User
from django.db.models import F, OuterRef, Q, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404
from django.utils.translation import gettext as _

from annotation.access import own_assignments
from annotation.models import Assignment
from content.lifecycle import RATEABLE_STATUSES, within_grace
from content.models import Prompt, Response
from projects.access import AnyUser, claimer_quotas_keep
from projects.models import Membership, Task

if TYPE_CHECKING:  # django-stubs-ext is a development dependency
    from django_stubs_ext import WithAnnotations

RECENT_SHOWN = 5  # how many of their latest ratings an annotator sees listed to reopen
FINISHED_STATUSES = (Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED)


def current_lease(user: User, task: Task) -> Assignment | None:
    """The pair the user holds in the task (their oldest lease on a pair still rateable), read
    without renewing it: claiming and renewing are the claim service's, on a POST."""
    return (
        Assignment.objects.filter(
            annotator=user,
            pair__task=task,
            status=Assignment.Status.LEASED,
            pair__status__in=RATEABLE_STATUSES,
        )
        .order_by("created_at", "id")
        .first()
    )


def assignment_position(assignment: Assignment) -> int:
    """This pair's place in the annotator's sequence for its task: pairs they rated, skipped
    or flagged count in the order they were handed out; a pair still open to them comes after
    every finished one."""
    earlier = Assignment.objects.filter(
        annotator_id=assignment.annotator_id,
        pair__task_id=assignment.pair.task_id,
        status__in=FINISHED_STATUSES,
    )
    if assignment.status in FINISHED_STATUSES:
        earlier = earlier.filter(
            Q(created_at__lt=assignment.created_at)
            | Q(created_at=assignment.created_at, pk__lt=assignment.pk)
        )
    return earlier.count() + 1


def assignment_for_annotator(user: AnyUser, assignment_id: int) -> Assignment:
    """One of the user's own assignments, with everything the annotate page shows, or 404.
    A user who left the project loses access to its assignments too. (Few joins per query:
    PostgreSQL plans a 9-table join slower than it runs three small queries.)"""
    assignment = (
        own_assignments(user)
        .filter(pk=assignment_id)
        .select_related("pair__project", "pair__task", "rating")
        .prefetch_related("rating__aspect_scores")
        .first()
    )
    if assignment is None:
        raise Http404(_("no such assignment"))
    pair = assignment.pair
    pair.prompt = Prompt.objects.get(pk=pair.prompt_id)
    responses = Response.objects.in_bulk([pair.response_a_id, pair.response_b_id])
    pair.response_a, pair.response_b = responses[pair.response_a_id], responses[pair.response_b_id]
    return assignment


class _ClaimerQuotas(TypedDict):
    member_project_quota: int | None
    member_task_quota: int | None


def task_of_assignment(user: User, assignment_id: int) -> Task:
    """The task (with its project) of one of the user's assignments, or 404; with the
    user's quotas in the project for the claim of their next pair (`claimer_quotas_keep`).
    One query."""
    mine = Membership.objects.filter(user=user, project=OuterRef("project"))
    task: WithAnnotations[Task, _ClaimerQuotas] | None = (
        Task.objects.filter(
            pk__in=own_assignments(user).filter(pk=assignment_id).values("pair__task")
        )
        .select_related("project")
        .annotate(
            member_project_quota=Subquery(mine.values("project_quota")[:1]),
            member_task_quota=Subquery(mine.values("task_quota")[:1]),
        )
        .first()
    )
    if task is None:
        raise Http404(_("no such assignment"))
    claimer_quotas_keep(task, user.pk, task.member_project_quota, task.member_task_quota)
    return task


def recent_submissions(user: User, task: Task) -> list[Assignment]:
    """The annotator's latest ratings in the task, newest first, with what the list of recent
    ratings shows (prompt, pair status and the rating itself)."""
    return list(
        Assignment.objects.filter(
            annotator=user, status=Assignment.Status.SUBMITTED, pair__task=task
        )
        .select_related("rating", "pair__prompt", "pair__project")
        .order_by("-submitted_at", "-id")[:RECENT_SHOWN]
    )


def last_finished(user: User, task: Task) -> Assignment | None:
    """The assignment the user finished last in the task (rated, skipped or flagged), with its
    pair and its flag if any. A skip from before skips were timed sorts after every other."""
    return (
        Assignment.objects.filter(annotator=user, pair__task=task, status__in=FINISHED_STATUSES)
        .select_related("pair", "flag")
        .annotate(finished_at=Coalesce("skipped_at", "submitted_at"))
        .order_by(F("finished_at").desc(nulls_last=True), "-id")
        .first()
    )


def undoable_skip(user: User, task: Task, now: datetime) -> Assignment | None:
    """The skip or flag the annotate page offers to undo: the last thing the user finished in
    the task, within the project's grace period (`edit_grace_minutes`, the one for correcting
    a rating), on a pair still being annotated, and for a flag, before a lead acted on it.
    One query. annotation.services.skip_undo holds the undo to the same rule (and to a free
    slot, which only the locked pair can tell)."""
    last = last_finished(user, task)
    if last is None or last.status != Assignment.Status.SKIPPED or last.skipped_at is None:
        return None
    if not within_grace(task.project, last.skipped_at, now):
        return None
    if last.pair.status not in RATEABLE_STATUSES:
        return None
    flag = getattr(last, "flag", None)
    if flag is not None and flag.resolved_at is not None:
        return None
    return last
