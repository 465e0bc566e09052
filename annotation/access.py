"""Who may see which pairs, assignments and ratings: the access policy's second half, built on
the project and task scopes of `projects/access.py` (read its rules first).

- A lead sees every pair of the projects they lead, un-blinded.
- An annotator reaches only their own assignments and ratings, and only while they still
  belong to the project; a placeholder account (imported ratings) reaches nothing.

Out of scope answers exactly like missing: callers narrow their queryset with these scopes
before looking an id up. Plain reads (the "Selectors read" import contract covers this module).
"""

from django.contrib.auth.models import AnonymousUser
from django.db.models import Exists, OuterRef, Q, QuerySet

from annotation.models import Assignment, Rating
from content.lifecycle import RATEABLE_STATUSES
from content.models import Pair
from projects.access import AnyUser, covers_task, led_projects, memberships_of
from projects.models import Membership


def led_pairs(user: AnyUser) -> QuerySet[Pair]:
    """Every pair of the projects the user leads, un-blinded."""
    return Pair.objects.filter(project__in=led_projects(user))


def pairs_showing_images_to(user: AnyUser) -> QuerySet[Pair]:
    """The pairs whose images the user may be shown: every pair of the projects they lead;
    in the projects they belong to, the pairs they hold an assignment on and the pairs of the
    tasks their membership covers that they may be handed: open pairs and gold checks (the
    next-pair preload fetches a due gold check's images before it is assigned, exactly as a
    real pair's — a 404 there would tell a gold check from a real pair)."""
    if isinstance(user, AnonymousUser):  # a filter on it would raise, not find nothing
        return Pair.objects.none()
    if user.is_superuser:
        return Pair.objects.filter(project__in=led_projects(user))
    led = memberships_of(user).filter(role=Membership.Role.LEAD).values("project")
    member = memberships_of(user).filter(project=OuterRef("project"))
    assigned = Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)
    return Pair.objects.filter(
        Q(project__in=led)
        | (Exists(member) & Exists(assigned))
        | (Q(status__in=RATEABLE_STATUSES) & covers_task(user, task="task"))
    )


def _still_member(user: AnyUser) -> Exists:
    # A placeholder's membership (an operator's mistake) gives it nothing: its imported
    # ratings are no one's own work.
    return Exists(
        memberships_of(user).filter(
            user__placeholder__isnull=True, project=OuterRef("pair__project")
        )
    )


def own_assignments(user: AnyUser) -> QuerySet[Assignment]:
    """The user's assignments in projects they still belong to: who leaves a project loses
    access to their work there too."""
    if isinstance(user, AnonymousUser):
        return Assignment.objects.none()
    return Assignment.objects.filter(_still_member(user), annotator=user)


def own_ratings(user: AnyUser) -> QuerySet[Rating]:
    """The user's ratings in projects they still belong to."""
    if isinstance(user, AnonymousUser):
        return Rating.objects.none()
    return Rating.objects.filter(_still_member(user), annotator=user)
