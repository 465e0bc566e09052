"""Members and invitations: the lead's members page, the invitee's page."""

from datetime import datetime

from django.db.models import Count, F, IntegerField, OuterRef, Prefetch, Subquery
from django.db.models.functions import Coalesce
from django.http import Http404

from annotation.models import Assignment, Invitation, Membership, Project, Rating, Task
from annotation.models.invitation import open_at as invitation_open_at
from annotation.models.invitation import token_hash as invitation_token_hash


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


def former_members(project: Project) -> list[dict]:
    """People who rated in the project and are no longer members (their ratings still
    count): `username`, `ratings`. Imported ratings' placeholder accounts are not people."""
    return list(
        Rating.objects.filter(pair__project=project, imported=False)
        .exclude(annotator__memberships__project=project)
        .values(username=F("annotator__username"))
        .annotate(ratings=Count("id"))
        .order_by("username")
    )


def project_open_invitations(project: Project, now: datetime) -> list[Invitation]:
    return list(
        Invitation.objects.filter(invitation_open_at(now), project=project)
        .select_related("created_by")
        .prefetch_related(Prefetch("tasks", queryset=Task.objects.order_by("slug")))
        .order_by("expires_at", "id")
    )


def membership_in_project(project: Project, membership_id: int) -> Membership:
    """A membership of this project (the caller leads it), or 404: a lead reaches no account
    outside their projects."""
    membership = (
        Membership.objects.filter(project=project, pk=membership_id)
        .select_related("user", "project")
        .first()
    )
    if membership is None:
        raise Http404("no such member")
    return membership


def invitation_in_project(project: Project, invitation_id: int) -> Invitation:
    invitation = Invitation.objects.filter(project=project, pk=invitation_id).first()
    if invitation is None:
        raise Http404("no such invitation")
    return invitation


def invitation_for_token(token: str, now: datetime) -> Invitation | None:
    """The open invitation this link's token opens, with its project and tasks, or None
    (unknown, used, revoked and expired alike)."""
    return (
        Invitation.objects.filter(invitation_open_at(now), token_hash=invitation_token_hash(token))
        .select_related("project")
        .prefetch_related(Prefetch("tasks", queryset=Task.objects.order_by("slug")))
        .first()
    )
