"""The projects and memberships a user's pages list (the rules: annotation/access.py)."""

from django.db.models import QuerySet

from annotation.access import member_projects
from annotation.models import Membership, Project


def projects_for_user(user) -> QuerySet[Project]:
    return member_projects(user)


def may_create_projects(user) -> bool:
    """Operators, and leads given the right by `manage.py user_add --lead`."""
    return user.is_authenticated and user.has_perm("annotation.add_project")


def memberships_for_user(user) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user=user)
        .select_related("project")
        .prefetch_related("tasks")
        .order_by("project__slug")
    )
