"""Reads of the API: every queryset already narrowed to what the caller may see.

Scopes (docs/architecture.md §8) are those of projects/access.py and annotation/access.py: a
member sees the projects of their memberships; an annotator the tasks their membership names
(all of the project's when it names none) and only their own assignments and ratings; a lead
everything of the projects they lead, their judges and templates, and the operator's judges
(run only); a superuser everything.
This module only shapes them for the API (joins, order).
"""

import re
from dataclasses import dataclass

from django.db.models import Prefetch, QuerySet
from django.utils import timezone

from annotation import access
from annotation.models import Adjudication, Assignment, Rating
from annotation.selectors.assets import assets_by_sha
from annotation.selectors.assignments import assignment_for_annotator
from annotation.selectors.pairs import rating_can_change
from content.models import Asset, Pair
from content.rendering import image_shas
from core.whole_numbers import MAX_DATABASE_ID, whole_number
from judging.models import Judge, JudgeRun, PromptTemplate, Verdict
from judging.selectors import judges_for_lead
from projects import access as project_access
from projects.access import AnyUser, led_projects
from projects.models import Membership, Project, Task

MAX_ID = MAX_DATABASE_ID
_SLUG = re.compile(r"[-a-zA-Z0-9_]{1,64}")


def parse_id(value: object) -> int | None:
    """A primary key from a URL or query string (core/whole_numbers.py's rule, from 1)."""
    return whole_number(value) or None


def by_id_or_slug(queryset: QuerySet[Project], ref: str) -> QuerySet[Project]:
    """Narrow a project queryset to the project named by id (digits) or slug; anything that
    is neither names nothing (and never reaches the database)."""
    pk = parse_id(ref)
    if pk is not None:
        return queryset.filter(pk=pk)
    if not _SLUG.fullmatch(ref):
        return queryset.none()
    return queryset.filter(slug=ref)


# Projects and tasks


def visible_tasks(user: AnyUser) -> QuerySet[Task]:
    """Tasks of the projects the user leads, and those they may annotate."""
    tasks = project_access.visible_tasks(user)
    return tasks.select_related("project").order_by("project__slug", "slug")


# The annotator's own work


def own_assignments(user: AnyUser) -> QuerySet[Assignment]:
    """The user's assignments in projects they still belong to."""
    return (
        access.own_assignments(user)
        .select_related("pair__task__project")
        .order_by("-created_at", "-id")
    )


def own_ratings(user: AnyUser) -> QuerySet[Rating]:
    """The user's ratings in projects they still belong to."""
    return (
        access.own_ratings(user)
        .select_related("assignment", "pair__task")
        .prefetch_related("aspect_scores")
        .order_by("-created_at", "-id")
    )


@dataclass(frozen=True)
class AssignmentView:
    """One of the user's assignments, blinded, with what its content needs."""

    assignment: Assignment
    assets: dict[str, Asset]
    editable: bool


def assignment_view(user: AnyUser, assignment_id: int) -> AssignmentView:
    """The user's assignment with its pair's content (Http404 unless theirs)."""
    assignment = assignment_for_annotator(user, assignment_id)
    pair = assignment.pair
    shas = image_shas(pair.prompt.content, pair.response_a.content, pair.response_b.content)
    return AssignmentView(
        assignment, assets_by_sha(shas), rating_can_change(assignment, timezone.now())
    )


# The lead's data


def lead_pairs(user: AnyUser) -> QuerySet[Pair]:
    return access.led_pairs(user).select_related("task", "project").order_by("id")


def pair_for_lead(user: AnyUser, pair_id: int) -> tuple[Pair, dict[str, Asset]] | None:
    """A pair of a project the user leads, un-blinded, with its ratings and adjudications
    prefetched and the assets of its content; None when there is none."""
    pair = (
        lead_pairs(user)
        .filter(pk=pair_id)
        .select_related("prompt", "response_a__generator", "response_b__generator")
        .prefetch_related(
            Prefetch(
                "ratings",
                queryset=Rating.objects.select_related("annotator")
                .prefetch_related("aspect_scores")
                .order_by("created_at", "id"),
            ),
            Prefetch("adjudications", queryset=Adjudication.objects.select_related("lead")),
        )
        .first()
    )
    if pair is None:
        return None
    shas = image_shas(pair.prompt.content, pair.response_a.content, pair.response_b.content)
    return pair, assets_by_sha(shas)


def project_memberships(project: Project) -> QuerySet[Membership]:
    """The memberships of a project the caller leads, leads first, then by username, with
    their user and tasks: three queries a page (the count, the rows, their tasks)."""
    return (
        Membership.objects.filter(project=project)
        .select_related("user")
        .prefetch_related(Prefetch("tasks", queryset=Task.objects.order_by("slug")))
        .order_by("-role", "user__username", "id")
    )


def lead_runs(user: AnyUser) -> QuerySet[JudgeRun]:
    return (
        JudgeRun.objects.filter(project__in=led_projects(user))
        .select_related("judge", "task", "project")
        .order_by("-created_at", "-id")
    )


def lead_verdicts(user: AnyUser) -> QuerySet[Verdict]:
    return (
        Verdict.objects.filter(pair__project__in=led_projects(user))
        .select_related("judge", "pair")
        .order_by("pair_id", "judge__name", "order", "sample")
    )


def lead_templates(user: AnyUser) -> QuerySet[PromptTemplate]:
    """Template versions of the projects the user leads (built-ins live in the code)."""
    return PromptTemplate.objects.filter(project__in=led_projects(user)).order_by(
        "project_id", "name", "-version"
    )


def judges_for(user: AnyUser) -> QuerySet[Judge]:
    """The judges of the projects the user leads and the operator's (every judge for a
    superuser); PermissionDenied for someone who leads no project."""
    return judges_for_lead(user)


def task_in_project(project: Project, slug: str) -> Task | None:
    return Task.objects.filter(project=project, slug=slug).first()
