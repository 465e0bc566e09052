"""Reads for pages and commands: ready querysets, no writes."""

from django.db.models import QuerySet

from annotation.models import Membership, Project


def projects_for_user(user) -> QuerySet[Project]:
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def memberships_for_user(user) -> QuerySet[Membership]:
    return Membership.objects.filter(user=user).select_related("project").order_by("project__slug")
