"""Reads for pages and commands: ready querysets, no writes."""

from dataclasses import dataclass
from datetime import datetime, timedelta

from django.core.exceptions import PermissionDenied
from django.db import connection
from django.db.models import (
    Count,
    Exists,
    F,
    IntegerField,
    OuterRef,
    Prefetch,
    Q,
    QuerySet,
    Subquery,
    TextField,
)
from django.db.models.functions import Cast, Coalesce
from django.http import Http404

from annotation.gold_schedule import golds_ahead
from annotation.gold_selectors import gold_histories
from annotation.models import (
    Adjudication,
    Asset,
    Assignment,
    GoldAnswer,
    Invitation,
    Membership,
    Pair,
    Project,
    Prompt,
    Rating,
    Response,
    Task,
)
from annotation.models.invitation import open_at as invitation_open_at
from annotation.models.invitation import token_hash as invitation_token_hash
from annotation.models.pair import OPEN_STATUSES, RATEABLE_STATUSES, RATINGS_NEEDED
from annotation.rendering import image_shas

DECIDED_STATUSES = (Pair.Status.KEPT, Pair.Status.DROPPED)
RECENT_SHOWN = 5  # how many of their latest ratings an annotator sees listed to reopen
FINISHED_STATUSES = (Assignment.Status.SUBMITTED, Assignment.Status.SKIPPED)


def rating_can_change(assignment: Assignment, now: datetime) -> bool:
    """Whether the annotator may still submit on this assignment: it is leased to them; or
    they rated it and the pair is still open; or the pair was decided by consensus less than
    the project's grace period after they submitted (a slip can be corrected, and the edit
    re-decides the pair). A lead's adjudication locks it. annotation.services.ratings holds
    every submit to this rule; the page and the API show it."""
    if assignment.status == Assignment.Status.LEASED:
        return True
    if assignment.status != Assignment.Status.SUBMITTED:
        return False
    pair = assignment.pair
    if pair.status in OPEN_STATUSES:
        return True
    if pair.status == Pair.Status.GOLD:
        # Like a decided pair (no tell), except a qualification answer: its feedback
        # gives the expected side away, so it is final at once.
        if GoldAnswer.objects.filter(pair_id=pair.pk, qualification=True).exists():
            return False
    elif pair.status not in DECIDED_STATUSES or pair.decided_by != Pair.DecidedBy.CONSENSUS:
        return False
    grace = timedelta(minutes=pair.project.edit_grace_minutes)
    return assignment.submitted_at is not None and now < assignment.submitted_at + grace


def live_assignments(now: datetime) -> Q:
    """Assignments that hold one of a pair's slots (N + extra)."""
    return Q(status=Assignment.Status.SUBMITTED) | Q(
        status=Assignment.Status.LEASED, lease_expires_at__gt=now
    )


def claimable_pairs(user, now: datetime) -> QuerySet[Pair]:
    """Open pairs that still have a free slot and that the user never had (filter by task)."""
    live_count = (
        Assignment.objects.filter(live_assignments(now), pair=OuterRef("pk"))
        .order_by()
        .values("pair")
        .annotate(n=Count("id"))
        .values("n")
    )
    mine = Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)
    return (
        Pair.objects.filter(status__in=OPEN_STATUSES)
        .alias(live=Coalesce(Subquery(live_count, output_field=IntegerField()), 0))
        .filter(live__lt=RATINGS_NEEDED)
        .filter(~Exists(mine))
    )


def projects_for_user(user) -> QuerySet[Project]:
    if user.is_superuser:
        return Project.objects.all()
    return Project.objects.filter(memberships__user=user).distinct()


def project_for_lead(user, slug: str) -> Project:
    """A project the user leads (superusers lead every project). 403 for the project's
    annotators (they know it exists); for anyone else the same 404 as a project that does
    not exist, so that slugs cannot be probed."""
    project = Project.objects.filter(slug=slug).first()
    role = None
    if project is not None and not user.is_superuser:
        membership = Membership.objects.filter(user=user, project=project).first()
        role = membership.role if membership else None
    if project is None or (role is None and not user.is_superuser):
        raise Http404("no such project")
    if role not in (None, Membership.Role.LEAD):
        raise PermissionDenied("only the project's leads may see this page")
    return project


def may_create_projects(user) -> bool:
    """Operators, and leads given the right by `manage.py user_add --lead`."""
    return user.is_authenticated and user.has_perm("annotation.add_project")


def is_lead_anywhere(user) -> bool:
    return user.is_superuser or Membership.objects.filter(user=user, role="lead").exists()


def memberships_for_user(user) -> QuerySet[Membership]:
    return (
        Membership.objects.filter(user=user)
        .select_related("project")
        .prefetch_related("tasks")
        .order_by("project__slug")
    )


def tasks_for_membership(membership: Membership) -> list[Task]:
    """The tasks a member may annotate: those the membership names, else all of the project's."""
    limited = list(membership.tasks.all())
    if limited:
        return sorted(limited, key=lambda task: task.slug)
    return list(Task.objects.filter(project=membership.project).order_by("slug"))


def task_for_annotator(user, project_slug: str, task_slug: str) -> Task:
    """A task the user may annotate, or 404."""
    membership = (
        Membership.objects.filter(user=user, project__slug=project_slug)
        .select_related("project")
        .first()
    )
    if membership is None:
        raise Http404("no such task")
    for task in tasks_for_membership(membership):
        if task.slug == task_slug:
            task.project = membership.project
            return task
    raise Http404("no such task")


@dataclass(frozen=True)
class TaskProgress:
    task: Task
    done: int  # pairs this annotator rated
    remaining: int  # pairs still open to them
    skipped: int = 0  # pairs they skipped or flagged: finished too, but not rated

    @property
    def finished(self) -> int:
        return self.done + self.skipped

    @property
    def total(self) -> int:
        return self.finished + self.remaining

    @property
    def percent(self) -> int:
        return round(100 * self.finished / self.total) if self.total else 100


def current_lease(user, task: Task) -> Assignment | None:
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


def annotator_progress(user, tasks: list[Task], now: datetime) -> list[TaskProgress]:
    """Rated, skipped and remaining per task, in a fixed number of queries whatever the number
    of tasks (two; one more when a task serves gold checks, and two more when some are
    ahead)."""
    if not tasks:
        return []
    # Finished and leased in one query (a lease counts only while its pair can be rated).
    counts: dict[tuple[int, str], int] = {}
    for task_id, status, n, rateable in (
        Assignment.objects.filter(
            annotator=user,
            status__in=(*FINISHED_STATUSES, Assignment.Status.LEASED),
            pair__task__in=tasks,
        )
        .values("pair__task", "status")
        .annotate(n=Count("id"), rateable=Count("id", filter=Q(pair__status__in=RATEABLE_STATUSES)))
        .values_list("pair__task", "status", "n", "rateable")
    ):
        counts[task_id, status] = rateable if status == Assignment.Status.LEASED else n
    claimable = dict(
        claimable_pairs(user, now)
        .filter(task__in=tasks)
        .values("task")
        .annotate(n=Count("id"))
        .values_list("task", "n")
    )
    serving_gold = [task for task in tasks if task.gold_rate > 0 and claimable.get(task.pk)]
    gold_left = (
        dict(
            Pair.objects.filter(
                task__in=serving_gold, status=Pair.Status.GOLD, gold__qualification=False
            )
            .exclude(assignments__annotator=user)
            .values("task")
            .annotate(n=Count("id"))
            .values_list("task", "n")
        )
        if serving_gold
        else {}
    )
    # The gold checks still ahead, counted in "of N" so that the total does not move when one
    # is served (a tell): the histories of the tasks that have some, in two queries.
    with_gold = [task for task in serving_gold if gold_left.get(task.pk)]
    histories = gold_histories(user, with_gold) if with_gold else {}

    def ahead(task: Task) -> int:
        if task not in with_gold:
            return 0
        position, golds_so_far, since_last = histories.get(task.pk, (0, 0, None))
        return golds_ahead(
            user.pk, task, position, golds_so_far, since_last,
            claimable[task.pk], gold_left[task.pk],
        )  # fmt: skip

    return [
        TaskProgress(
            task,
            done=counts.get((task.pk, Assignment.Status.SUBMITTED), 0),
            remaining=claimable.get(task.pk, 0)
            + counts.get((task.pk, Assignment.Status.LEASED), 0)
            + ahead(task),
            skipped=counts.get((task.pk, Assignment.Status.SKIPPED), 0),
        )
        for task in tasks
    ]


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


def _is_member(user):
    # A placeholder's membership (an operator's mistake) gives it nothing: its imported
    # ratings are no one's own work.
    return Exists(
        Membership.objects.filter(
            user=user, user__placeholder__isnull=True, project=OuterRef("pair__project")
        )
    )


def assignment_for_annotator(user, assignment_id: int) -> Assignment:
    """One of the user's own assignments, with everything the annotate page shows, or 404.
    A user who left the project loses access to its assignments too. (Few joins per query:
    PostgreSQL plans a 9-table join slower than it runs three small queries.)"""
    assignment = (
        Assignment.objects.filter(_is_member(user), pk=assignment_id, annotator=user)
        .select_related("pair__project", "pair__task", "rating")
        .prefetch_related("rating__aspect_scores")
        .first()
    )
    if assignment is None:
        raise Http404("no such assignment")
    pair = assignment.pair
    pair.prompt = Prompt.objects.get(pk=pair.prompt_id)
    responses = Response.objects.in_bulk([pair.response_a_id, pair.response_b_id])
    pair.response_a, pair.response_b = responses[pair.response_a_id], responses[pair.response_b_id]
    return assignment


def task_of_assignment(user, assignment_id: int) -> Task:
    """The task (with its project) of one of the user's assignments, or 404."""
    task = (
        Task.objects.filter(
            pairs__assignments__pk=assignment_id,
            pairs__assignments__annotator=user,
            project__memberships__user=user,
        )
        .select_related("project")
        .first()
    )
    if task is None:
        raise Http404("no such assignment")
    return task


def recent_submissions(user, task: Task) -> list[Assignment]:
    """The annotator's latest ratings in the task, newest first, with what the list of recent
    ratings shows (prompt, pair status and the rating itself)."""
    return list(
        Assignment.objects.filter(
            annotator=user, status=Assignment.Status.SUBMITTED, pair__task=task
        )
        .select_related("rating", "pair__prompt", "pair__project")
        .order_by("-submitted_at", "-id")[:RECENT_SHOWN]
    )


def next_task_for(user, task: Task, now: datetime) -> TaskProgress | None:
    """Another task of the same project with pairs left for this annotator (the first by
    name), for the end of a task."""
    membership = Membership.objects.filter(user=user, project_id=task.project_id).first()
    if membership is None:
        return None
    others = [other for other in tasks_for_membership(membership) if other.pk != task.pk]
    for other in others:
        other.project = task.project
    progress = annotator_progress(user, others, now)
    return next((row for row in progress if row.remaining), None)


def assets_by_sha(shas: set[str]) -> dict[str, Asset]:
    if not shas:
        return {}
    return {asset.sha256: asset for asset in Asset.objects.filter(sha256__in=shas)}


def _pairs_showing_images_to(user) -> QuerySet[Pair]:
    """The pairs whose images the user may be shown: every pair of the projects they lead;
    in the projects they belong to, the pairs they hold an assignment on and the open pairs of
    the tasks their membership covers (those they may be assigned)."""
    if user.is_superuser:
        return Pair.objects.all()
    led = Membership.objects.filter(user=user, role=Membership.Role.LEAD).values("project")
    member = Membership.objects.filter(user=user, project=OuterRef("project"))
    assigned = Assignment.objects.filter(pair=OuterRef("pk"), annotator=user)
    covered = Exists(member.filter(tasks__isnull=True)) | Exists(
        member.filter(tasks=OuterRef("task"))
    )
    return Pair.objects.filter(
        Q(project__in=led)
        | (Exists(member) & Exists(assigned))
        | (Q(status__in=OPEN_STATUSES) & covered)
    )


def _naming_image(model, sha256: str) -> QuerySet:
    """Prompts or responses whose part list names the image: exactly, by JSON containment,
    where the database has it (PostgreSQL); else a superset, by a match on the JSON's text."""
    if connection.features.supports_json_field_contains:
        return model.objects.filter(content__contains=[["image", sha256]])
    return model.objects.alias(text=Cast("content", TextField())).filter(text__contains=sha256)


def asset_for_user(user, sha256: str) -> Asset | None:
    """The image with this hash if a pair the user may be shown uses it, else None: an image
    out of scope is indistinguishable from one that does not exist, in the answer and in the
    work done. The scope comes first: one query finds the pairs in scope whose prompt or
    responses name the hash, whether or not such an image exists anywhere; the asset row is
    read only once a pair in scope has been confirmed (two queries then, one otherwise).

    Part lists are JSON with no index from image to pair: the prompts and responses naming
    the image are found by one pass over their content (a GIN index on `content` would make
    it a lookup). Each candidate is confirmed part by part, so a text part quoting the hash
    grants nothing."""
    if user.is_superuser:
        return Asset.objects.filter(sha256=sha256).first()
    prompts = _naming_image(Prompt, sha256).values("pk")
    responses = _naming_image(Response, sha256).values("pk")
    contents = ("prompt__content", "response_a__content", "response_b__content")
    candidates = (
        _pairs_showing_images_to(user)
        .filter(Q(prompt__in=prompts) | Q(response_a__in=responses) | Q(response_b__in=responses))
        .values_list(*contents)
    )
    for parts in candidates.iterator(chunk_size=50):
        if sha256 in image_shas(*parts):
            return Asset.objects.filter(sha256=sha256).first()
    return None


def latest_adjudications(pair_ids) -> dict[int, Adjudication]:
    """The decision in force for each pair: its latest adjudication (the history is kept)."""
    latest: dict[int, Adjudication] = {}
    rows = Adjudication.objects.filter(pair_id__in=pair_ids).order_by("created_at", "id")
    for adjudication in rows.only("pair_id", "decision", "note", "created_at"):
        latest[adjudication.pair_id] = adjudication  # later rows replace earlier ones
    return latest


# Members and invitations (the lead's members page, the invitee's page).


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
