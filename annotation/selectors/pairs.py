"""Reads about pairs: which hold a free slot, whether a rating may still change, the decision
in force."""

from collections.abc import Iterable
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import Count, Exists, IntegerField, OuterRef, Q, QuerySet, Subquery
from django.db.models.functions import Coalesce

from annotation.models import Adjudication, Assignment, GoldAnswer
from content.lifecycle import DECIDED_STATUSES, OPEN_STATUSES, within_grace
from content.models import Pair
from content.models.pair import RATINGS_NEEDED, SAMPLE_ORDER
from projects.models import Task


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
    return within_grace(pair.project, assignment.submitted_at, now)


def live_assignments(now: datetime) -> Q:
    """Assignments that hold one of a pair's slots (N + extra)."""
    return Q(status=Assignment.Status.SUBMITTED) | Q(
        status=Assignment.Status.LEASED, lease_expires_at__gt=now
    )


def claimable_pairs(user: User, now: datetime) -> QuerySet[Pair]:
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


def in_claim_order(candidates: QuerySet[Pair], task: Task) -> QuerySet[Pair]:
    """Pairs already started first (they finish before new ones start); then, by default, by
    each pair's uniform draw (Pair.draw), never in import order: whenever the experts stop,
    the pairs they started are (up to skips) those with the smallest draws, a simple random
    sample of the pool, which every interval, the planner and the label calibration assume
    (an import file is often sorted by source or difficulty). In a sample, in the sample's
    order (judging/services/sampling.py), and no new pair once the task has started its
    budget of pairs. The claim and the next-pair preload (selectors/upcoming.py) both read
    this order."""
    project = task.project
    if project.rating_mode != project.RatingMode.SAMPLE:
        return candidates.order_by("-rating_count", "draw", "id")
    started = Assignment.objects.filter(pair=OuterRef("pk"))
    if project.rating_budget is not None:
        begun = (
            Assignment.objects.filter(pair__task=task)
            .exclude(pair__status=Pair.Status.GOLD)
            .values("pair")
            .distinct()
            .count()
        )
        if begun >= project.rating_budget:
            candidates = candidates.filter(Exists(started))
    return candidates.order_by("-rating_count", SAMPLE_ORDER.asc(), "id")


def latest_adjudications(pair_ids: Iterable[int]) -> dict[int, Adjudication]:
    """The decision in force for each pair: its latest adjudication (the history is kept)."""
    latest: dict[int, Adjudication] = {}
    rows = Adjudication.objects.filter(pair_id__in=pair_ids).order_by("created_at", "id")
    for adjudication in rows.only("pair_id", "decision", "note", "created_at"):
        latest[adjudication.pair_id] = adjudication  # later rows replace earlier ones
    return latest
