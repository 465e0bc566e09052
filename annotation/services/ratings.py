"""Storing an annotator's rating, and deciding the pair when its last needed rating arrives
(the N-th, or N + extra when a lead asked for more annotators).

The form speaks of Left and Right: score 1 = Left much better … K = Right much better. Ratings
are stored canonically (docs/architecture.md §5.1: above the centre = A better); `swapped`
says whether B was on the left.
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.gold.services import gold_review
from annotation.models import Adjudication, AspectScore, Assignment, Rating
from annotation.selectors.pairs import rating_can_change
from annotation.services.assignments import (
    AssignmentClosed,
    lock_own_assignment,
    pair_has_free_slot,
)
from annotation.services.consensus import pair_decide
from annotation.services.throughput import rating_counted
from content.lifecycle import RATEABLE_STATUSES
from content.models import Pair
from core.errors import Invalid
from projects.scale import to_canonical

MAX_ACTIVE_SECONDS = 6 * 3600  # a client clock gone wrong must not skew time-per-pair figures
MAX_RATIONALE_CHARS = 10_000


class RatingInvalid(Invalid):
    """`errors` maps the form's fields (`overall`, `aspect_<key>`, …) to a message; `fields`
    has the shape of RatingInput (`aspects: {key: [message]}`)."""

    def __init__(self, errors: dict[str, str]):
        fields: dict[str, list[str] | dict[str, list[str]]] = {}
        aspects: dict[str, list[str]] = {}
        for key, message in errors.items():
            if key.startswith("aspect_"):
                fields.setdefault("aspects", aspects)
                aspects[key.removeprefix("aspect_")] = [message]
            else:
                fields[key] = [message]
        super().__init__("; ".join(f"{key}: {message}" for key, message in errors.items()), fields)
        self.errors = errors


@dataclass
class RatingInput:
    """What the form sends, in Left/Right orientation, not yet checked."""

    overall: str | int | None
    aspects: dict[str, str | int | None] = field(default_factory=dict)
    rationale: str = ""
    active_seconds: str | float | None = None


@dataclass(frozen=True)
class CheckedRating:
    overall: int
    aspects: dict[str, int]
    rationale: str
    active_seconds: float | None


def _score(value: str | int | None, scale: int) -> int | None:
    if value is None or value == "":
        return None
    try:
        score = int(value)
    except (TypeError, ValueError):
        raise ValueError(
            _("must be a whole number from 1 to %(scale)d") % {"scale": scale}
        ) from None
    if not 1 <= score <= scale:
        raise ValueError(_("must be from 1 to %(scale)d") % {"scale": scale})
    return score


def rating_check(data: RatingInput, scale: int, aspect_keys: list[str]) -> CheckedRating:
    """Validate form input; aspects are optional, the overall score is not."""
    errors: dict[str, str] = {}
    overall = None
    try:
        overall = _score(data.overall, scale)
        if overall is None:
            errors["overall"] = _("choose an overall preference")
    except ValueError as error:
        errors["overall"] = str(error)
    aspects: dict[str, int] = {}
    for key, value in data.aspects.items():
        if key not in aspect_keys:
            errors[f"aspect_{key}"] = _("not an aspect of this task")
            continue
        try:
            score = _score(value, scale)
        except ValueError as error:
            errors[f"aspect_{key}"] = str(error)
            continue
        if score is not None:
            aspects[key] = score
    if len(data.rationale) > MAX_RATIONALE_CHARS:
        errors["rationale"] = _("keep it under %(limit)d characters") % {
            "limit": MAX_RATIONALE_CHARS
        }
    active = None
    if data.active_seconds is not None and data.active_seconds != "":
        try:
            active = min(max(float(data.active_seconds), 0.0), MAX_ACTIVE_SECONDS)
        except (TypeError, ValueError):
            errors["active_seconds"] = _("must be a number of seconds")
        else:
            if active != active:  # NaN
                errors["active_seconds"] = _("must be a number of seconds")
    if errors or overall is None:  # a None overall has its message in `errors`
        raise RatingInvalid(errors)
    return CheckedRating(overall, aspects, data.rationale.strip(), active)


def _elapsed(assignment: Assignment, now: datetime) -> float:
    """Server-side fallback for the active time (no JavaScript): time since the claim."""
    return min(max((now - assignment.created_at).total_seconds(), 0.0), MAX_ACTIVE_SECONDS)


def _unchanged(rating: Rating, canonical: int, aspects: dict[str, int], rationale: str) -> bool:
    stored = {score.aspect: score.score for score in rating.aspect_scores.all()}
    return (rating.overall, stored, rating.rationale) == (canonical, aspects, rationale)


def rating_submit(
    assignment_id: int, user: User, data: RatingInput, *, now: datetime | None = None
) -> Rating:
    """Store (or, while annotation.selectors.rating_can_change allows it, change) the user's
    rating of an assignment. A repeated submit stores one rating. The last needed rating
    (N + extra) decides the pair in this transaction; a correction within the grace period
    re-decides it.
    Raises AssignmentNotFound for someone else's assignment or a placeholder's
    (lock_own_assignment), RatingInvalid for bad input and AssignmentClosed when the
    assignment cannot take a rating any more."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment, pair = lock_own_assignment(assignment_id, user)
        resubmitted = assignment.status == Assignment.Status.SUBMITTED
        scale, swapped = pair.project.scale_points, assignment.swapped
        keys = [aspect["key"] for aspect in pair.task.aspects]
        checked = rating_check(data, scale, keys)
        canonical = to_canonical(checked.overall, scale, swapped)
        aspects = {key: to_canonical(v, scale, swapped) for key, v in checked.aspects.items()}

        if assignment.status == Assignment.Status.SKIPPED:
            raise AssignmentClosed(_("You skipped this pair; it cannot be rated now."))
        rating = Rating.objects.filter(assignment=assignment).first()
        assignment.pair = pair  # the locked row, for the rule below
        if rating is not None and not rating_can_change(assignment, now):
            if _unchanged(rating, canonical, aspects, checked.rationale):
                rating.pair, rating.resubmitted = pair, resubmitted
                return rating  # a repeated submit after the pair was decided
            raise AssignmentClosed(
                _(
                    "This pair is complete and the time to correct your rating is over; "
                    "it can no longer change."
                )
            )
        if rating is None:
            if pair.status not in RATEABLE_STATUSES:
                raise AssignmentClosed(_("This pair is no longer being annotated."))
            lease_over = assignment.status == Assignment.Status.EXPIRED or (
                assignment.lease_expires_at is not None and assignment.lease_expires_at <= now
            )
            limit = pair.ratings_needed()
            if (
                lease_over
                and pair.status != Pair.Status.GOLD  # a gold check has no slots
                and not pair_has_free_slot(pair.pk, limit, now, excluding=assignment)
            ):
                raise AssignmentClosed(
                    _("Your time on this pair ran out and it went to another annotator.")
                )
            rating = Rating(
                assignment=assignment, pair=pair, annotator=user, scale=scale, active_seconds=0
            )
        active = checked.active_seconds
        rating.active_seconds += _elapsed(assignment, now) if active is None else active
        rating.overall = canonical
        rating.rationale = checked.rationale
        replacing = rating.pk is not None
        rating.save()
        if replacing:
            AspectScore.objects.filter(rating=rating).delete()
        else:
            rating_counted(pair.project_id, user.pk, now)
        AspectScore.objects.bulk_create(
            AspectScore(rating=rating, aspect=key, scale=scale, score=score)
            for key, score in aspects.items()
        )
        if assignment.status != Assignment.Status.SUBMITTED:
            assignment.status = Assignment.Status.SUBMITTED
            assignment.submitted_at = now
            assignment.save(update_fields=["status", "submitted_at"])
        _pair_update(pair)
        if pair.status == Pair.Status.GOLD:
            gold_review(user, pair.task)
        # The locked row (callers read its status without a query), and whether the
        # annotator had rated the pair before (a change, not a first rating).
        rating.pair, rating.resubmitted = pair, resubmitted
        return rating


def _pair_update(pair: Pair) -> None:
    """Derived columns after a rating: in progress until N + extra ratings, then kept or
    dropped."""
    scores = list(Rating.objects.filter(pair=pair).values_list("overall", flat=True))
    adjudication = Adjudication.objects.filter(pair=pair).first()  # latest first
    pair_decide(pair, scores, adjudication)
