"""The pair browser's saved views a lead sees in a project: their own and those the project's
other leads shared (one query)."""

from dataclasses import dataclass

from django.contrib.auth.models import User
from django.db.models import Q

from dashboards.models import SavedView
from projects.models import Project


@dataclass(frozen=True)
class ViewLink:
    pk: int
    name: str
    query: str
    shared: bool
    mine: bool
    owner: str


def saved_views_for(project: Project, user: User) -> list[ViewLink]:
    """The user's views of the project, then the others' shared ones, each by name."""
    rows = (
        SavedView.objects.filter(Q(owner=user) | Q(shared=True), project=project)
        .order_by("name", "pk")
        .values_list("pk", "name", "query", "shared", "owner_id", "owner__username")
    )
    views = [
        ViewLink(pk, name, query, shared, owner_id == user.pk, owner)
        for pk, name, query, shared, owner_id, owner in rows
    ]
    return sorted(views, key=lambda view: not view.mine)  # stable: by name within each
