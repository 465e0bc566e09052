"""An annotator's own ratings in a project, every one of them, newest first (the annotate
page lists only the latest few). Blind like the annotate page: the prompt, their own score
as they pressed it (their Left and Right) and whether they may still correct it; never a
generator, an external pair id, the pair's status or label, or anyone else's rating."""

from datetime import datetime
from typing import TypedDict

from django.contrib.auth.models import User
from django.core.paginator import Page, Paginator
from django.db.models import QuerySet
from django.utils.translation import gettext as _

from annotation.models import Assignment
from annotation.selectors.pairs import rating_can_change
from content.rendering import content_summary
from projects.access import memberships_of, tasks_for_membership
from projects.models import Membership, Task
from projects.scale import scale_labels, to_form

OWN_RATINGS_PER_PAGE = 50


def own_membership_of(user: User, slug: str) -> Membership | None:
    """The user's membership of the project with this slug (any role), or None: not a member
    and no such project read the same. One query."""
    return memberships_of(user).filter(project__slug=slug).select_related("project").first()


def own_rating_tasks(membership: Membership) -> list[Task]:
    """The tasks the member may filter their ratings by: those they may annotate."""
    return sorted(tasks_for_membership(membership), key=lambda task: (task.name, task.pk))


def own_ratings(
    user: User, membership: Membership, task: Task | None = None
) -> QuerySet[Assignment]:
    """The user's rated assignments in the project (in one task), newest first."""
    rated = Assignment.objects.filter(
        annotator=user, status=Assignment.Status.SUBMITTED, pair__project=membership.project
    )
    if task is not None:
        rated = rated.filter(pair__task=task)
    return rated.select_related("rating", "pair__prompt", "pair__task", "pair__project").order_by(
        "-submitted_at", "-id"
    )


class OwnRatingRow(TypedDict):
    assignment: Assignment
    task: str
    prompt: str
    pressed: int | None  # the digit they pressed; None while the rating is missing
    score: str
    submitted_at: datetime | None
    editable: bool


def own_ratings_page(
    user: User,
    membership: Membership,
    page_number: str | None,
    now: datetime,
    task: Task | None = None,
) -> tuple[Page[Assignment], list[OwnRatingRow]]:
    """One page of the user's ratings (any page number: a bad one gives the first or last
    page) and its rows: `assignment`, `task`, `prompt`, `pressed` (the digit they pressed),
    `score` (its words), `submitted_at`, `editable`. Three queries (count, page, and one per
    gold check on the page, for whether it is final: annotation.selectors.rating_can_change)."""
    page = Paginator(own_ratings(user, membership, task), OWN_RATINGS_PER_PAGE).get_page(
        page_number
    )
    rows: list[OwnRatingRow] = []
    for assignment in page.object_list:
        rating = getattr(assignment, "rating", None)
        pressed: int | None = None
        words = ""
        if rating is not None:
            pressed = to_form(rating.overall, rating.scale, assignment.swapped)
            words = _(dict(scale_labels(rating.scale)).get(pressed, str(pressed)))
        rows.append(
            OwnRatingRow(
                assignment=assignment,
                task=assignment.pair.task.name,
                prompt=content_summary(assignment.pair.prompt.content, limit=120),
                pressed=pressed,
                score=words,
                submitted_at=assignment.submitted_at,
                editable=rating_can_change(assignment, now),
            )
        )
    return page, rows
