"""Projects, memberships, invitations and API tokens as the pages list and look them up (the
scopes: projects/access.py)."""

from datetime import datetime

from django.contrib.auth.models import AnonymousUser
from django.db.models import Prefetch, QuerySet
from django.http import Http404

from projects.access import AnyUser, member_projects
from projects.models import ApiToken, Invitation, Membership, Project, Task
from projects.models.api_token import usable_at as api_token_usable_at
from projects.models.invitation import open_at as invitation_open_at
from projects.models.invitation import token_hash as invitation_token_hash


def projects_for_user(user: AnyUser) -> QuerySet[Project]:
    return member_projects(user)


def may_create_projects(user: AnyUser) -> bool:
    """Operators, and leads given the right by `manage.py user_add --lead`."""
    return bool(user.is_authenticated and user.has_perm("projects.add_project"))


def memberships_for_user(user: AnyUser) -> QuerySet[Membership]:
    if isinstance(user, AnonymousUser):  # a filter on it would raise, not find nothing
        return Membership.objects.none()
    return (
        Membership.objects.filter(user=user)
        .select_related("project")
        .prefetch_related("tasks")
        .order_by("project__slug")
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


def invitation_used_by(token: str, user: AnyUser) -> Invitation | None:
    """The invitation this link's token opened for `user`, when they used it and still
    belong to its project (the link opened again after joining), else None."""
    if not user.is_authenticated:
        return None
    return (
        Invitation.objects.filter(
            token_hash=invitation_token_hash(token),
            used_by=user,
            project__memberships__user=user,
        )
        .select_related("project")
        .first()
    )


def projects_by_slugs(listed: str) -> tuple[list[Project], list[str]]:
    """The projects a comma-separated list of slugs names (an operator's command line), and the
    slugs that name none, sorted."""
    slugs = [slug.strip() for slug in listed.split(",") if slug.strip()]
    projects = list(Project.objects.filter(slug__in=slugs))
    return projects, sorted(set(slugs) - {project.slug for project in projects})


ENDED_TOKENS_SHOWN = 20


def api_tokens_of(user: AnyUser, now: datetime) -> tuple[list[ApiToken], list[ApiToken]]:
    """The user's own API tokens for their account page: those in use (newest first), and
    the last ones that ended (revoked or expired), newest first. Two queries."""
    if isinstance(user, AnonymousUser):
        return [], []
    tokens = ApiToken.objects.filter(user=user).select_related("project")
    usable = api_token_usable_at(now)
    ended = tokens.exclude(usable).order_by("-created_at", "-id")[:ENDED_TOKENS_SHOWN]
    return list(tokens.filter(usable)), list(ended)
