"""The members page's figures: each member's work, who rated and left, and the pairs in
progress a lead may give back to the pool."""

from typing import TypedDict

from django.db.models import Count, F, IntegerField, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Assignment, Rating
from projects.models import Membership, Project, Task


def project_members(project: Project) -> list[Membership]:
    """The project's members, leads first, each with `ratings` (in this project),
    `last_activity` (their latest claim or submission here, or None) and their tasks.
    Two queries whatever the number of members."""
    ratings = (
        Rating.objects.filter(pair__project=project, annotator=OuterRef("user"))
        .order_by()
        .values("annotator")
        .annotate(n=Count("id"))
        .values("n")
    )
    # A submission is never earlier than its claim: this is the assignment's latest event.
    latest = (
        Assignment.objects.filter(pair__project=project, annotator=OuterRef("user"))
        .annotate(at=Coalesce("submitted_at", "created_at"))
        .order_by("-at")
        .values("at")[:1]
    )
    return list(
        Membership.objects.filter(project=project)
        .select_related("user")
        .prefetch_related(Prefetch("tasks", queryset=Task.objects.order_by("slug")))
        .annotate(
            ratings=Coalesce(Subquery(ratings, output_field=IntegerField()), 0),
            last_activity=Subquery(latest),
        )
        .order_by("-role", "user__username")
    )


class FormerMember(TypedDict):
    username: str
    ratings: int


def former_members(project: Project) -> list[FormerMember]:
    """People who rated in the project and are no longer members (their ratings still
    count): `username`, `ratings`. Imported ratings' placeholder accounts are not people."""
    rows = (
        Rating.objects.filter(pair__project=project, imported=False)
        .exclude(annotator__memberships__project=project)
        .values(username=F("annotator__username"))
        .annotate(ratings=Count("id"))
        .order_by("username")
    )
    return [FormerMember(username=row["username"], ratings=row["ratings"]) for row in rows]


def project_leases(project: Project) -> list[Assignment]:
    """The project's assignments in progress (not imported ratings' placeholders), oldest
    first, each with its annotator, pair and task (the page compares their lease's end with
    `now`). One query."""
    return list(
        Assignment.objects.filter(
            pair__project=project,
            status=Assignment.Status.LEASED,
            annotator__placeholder__isnull=True,
        )
        .select_related("annotator", "pair__task")
        .order_by("created_at", "id")
    )
