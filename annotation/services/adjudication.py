"""The lead's adjudication (docs/architecture.md §5.6): decide a pair (keep as A, keep as B,
drop), send it to one more annotator, change the project's filter settings and re-apply them.

Every action is recorded with who, when and why (an `Adjudication` or an `AnnotatorRequest`
row, never changed afterwards) and changes the pair's derived columns in the same transaction.
Writers lock the pair row first, as the assignment and rating services do.
"""

import math

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db import transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation.models import Adjudication, AnnotatorRequest, Flag, Rating
from annotation.services.consensus import pair_decide, pairs_decide
from content.lifecycle import OPEN_STATUSES
from content.models import Pair
from core.errors import Invalid, Refused
from projects.access import led_projects
from projects.models import Project

MAX_NOTE_CHARS = 10_000
_BATCH = 500
# Statuses of pairs that the consensus rule may decide (candidates and easy pairs get no ratings).
_RULED = (*OPEN_STATUSES, Pair.Status.COMPLETE, Pair.Status.KEPT, Pair.Status.DROPPED)


class AdjudicationRefused(Refused):
    """The lead's action cannot be done; the message says why, for the lead."""


class FilterInvalid(Invalid):
    """Filter settings out of range; `errors` maps each field to its message (400)."""

    def __init__(self, errors: dict[str, str]):
        fields = {key: [message] for key, message in errors.items()}
        super().__init__(" ".join(errors.values()), fields)
        self.errors = errors


def _note_check(note: str) -> str:
    note = (note or "").strip()
    if not note:
        raise AdjudicationRefused("Write a note saying why.")
    if len(note) > MAX_NOTE_CHARS:
        raise AdjudicationRefused(f"Keep the note under {MAX_NOTE_CHARS} characters.")
    return note


def _adjudicated() -> Exists:
    return Exists(Adjudication.objects.filter(pair=OuterRef("pk")))


def _pair_lock_for_lead(pair_id: int, lead: User) -> Pair:
    """Lock the pair (Pair.DoesNotExist when there is none) and check that `lead` leads its
    project (superusers lead every project), else PermissionDenied."""
    pair = Pair.objects.select_for_update(of=("self",)).select_related("project").get(pk=pair_id)
    if not led_projects(lead).filter(pk=pair.project_id).exists():
        raise PermissionDenied("only the project's leads may decide its pairs")
    return pair


def _scores(pair: Pair) -> list[int]:
    return list(Rating.objects.filter(pair=pair).values_list("overall", flat=True))


def pair_adjudicate(pair_id: int, lead: User, decision: str, note: str) -> Adjudication:
    """Record the lead's decision (keep_a, keep_b or drop, with a note saying why) and apply it
    at once: the latest adjudication sets the pair's label and status, over the consensus. The
    pair's open flags are resolved by the lead. Submitting the latest decision again (same
    lead, decision and note) records nothing new.
    Raises AdjudicationRefused for an unknown decision or an empty note, PermissionDenied when
    `lead` does not lead the pair's project."""
    if decision not in Adjudication.Decision.values:
        raise AdjudicationRefused("Choose keep A, keep B or drop.")
    note = _note_check(note)
    with transaction.atomic():
        pair = _pair_lock_for_lead(pair_id, lead)
        if pair.status == Pair.Status.GOLD:
            raise AdjudicationRefused("This pair is a gold check: change its expected side.")
        adjudication = Adjudication.objects.filter(pair=pair).first()  # latest first
        if adjudication is None or (
            (adjudication.lead_id, adjudication.decision, adjudication.note)
            != (lead.pk, decision, note)
        ):
            adjudication = Adjudication.objects.create(
                pair=pair, lead=lead, decision=decision, note=note
            )
        pair_decide(pair, _scores(pair), adjudication, actor=lead)
        Flag.objects.filter(pair=pair, resolved_at__isnull=True).update(
            resolved_at=timezone.now(), resolved_by=lead
        )
        return adjudication


def pair_request_annotator(pair_id: int, lead: User, note: str) -> Pair:
    """Send the pair to one more annotator: it needs one more rating (N + extra), is open for
    claims again (in progress) and is undecided until that rating is in; then the consensus of
    all its ratings decides it. Recorded as an AnnotatorRequest (who, when, why). Submitting
    the same request again (same lead and note) while that rating is missing adds nothing.
    Raises AdjudicationRefused when the pair was adjudicated (the lead's decision stands),
    when it is not being annotated (candidate, easy, or labelled on import without ratings)
    or for an empty note; PermissionDenied when `lead` does not lead the pair's project."""
    note = _note_check(note)
    with transaction.atomic():
        pair = _pair_lock_for_lead(pair_id, lead)
        if Adjudication.objects.filter(pair=pair).exists():
            raise AdjudicationRefused(
                "A lead has decided this pair, so another rating would not change it: "
                "adjudicate it again instead."
            )
        if pair.status not in OPEN_STATUSES and pair.decided_by != Pair.DecidedBy.CONSENSUS:
            raise AdjudicationRefused(
                f"This pair is not being annotated (status: {pair.status}), so it has no "
                "annotators to add to."
            )
        latest = AnnotatorRequest.objects.filter(pair=pair).first()  # latest first
        pending = pair.rating_count < pair.ratings_needed()
        if latest is not None and pending and (latest.lead_id, latest.note) == (lead.pk, note):
            return pair  # a repeated submit
        AnnotatorRequest.objects.create(pair=pair, lead=lead, note=note)
        pair.extra_annotators += 1
        pair_decide(pair, _scores(pair), None, also_saved=("extra_annotators",))
        return pair


def _whole_number(value: str | float | None) -> int | None:
    """The value as an int (from an int, a whole float or a numeric string), else None."""
    if (
        value is None
        or isinstance(value, bool)
        or (isinstance(value, float) and not value.is_integer())
    ):
        return None
    try:
        return int(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError, OverflowError):
        return None


def _real_number(value: str | float | None) -> float | None:
    """The value as a finite float, else None."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value.strip() if isinstance(value, str) else value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def project_filter_check(
    project: Project, max_span: str | float | None, ambiguous_half_width: str | float | None
) -> tuple[int, float]:
    """Validated (max_span, ambiguous_half_width) for the project's K: max span 0..K−1, half
    width 0..(K−1)/2. Raises FilterInvalid with a message per bad field."""
    k = project.scale_points
    errors: dict[str, str] = {}
    span, width = _whole_number(max_span), _real_number(ambiguous_half_width)
    if span is None or not 0 <= span <= k - 1:
        errors["max_span"] = f"The max span must be a whole number from 0 to {k - 1}."
    if width is None or not 0 <= width <= (k - 1) / 2:
        errors["ambiguous_half_width"] = (
            f"The ambiguous half width must be a number from 0 to {(k - 1) / 2:g}."
        )
    if errors or span is None or width is None:  # a None has its message in `errors`
        raise FilterInvalid(errors)
    return span, width


def project_filter_update(
    project: Project, *, max_span: str | float | None, ambiguous_half_width: str | float | None
) -> int:
    """Save the project's filter settings and re-apply them to its pairs (see
    `project_filter_apply`); returns how many pairs changed status. Raises FilterInvalid for
    values out of range, and then saves nothing."""
    span, width = project_filter_check(project, max_span, ambiguous_half_width)
    project.max_span, project.ambiguous_half_width = span, width
    # Saved, not a queryset update: the audit trail records the change (audit/).
    project.save(update_fields=["max_span", "ambiguous_half_width"])
    return project_filter_apply(project)


def project_filter_apply(project: Project) -> int:
    """Re-apply the project's consensus rules, in batches, to every pair they decide (at least
    N + extra ratings, no adjudication); returns how many pairs changed status. Pairs decided by
    an adjudication or by an imported label keep their decision.
    Run after the settings are committed: each batch locks its pairs and reads the settings
    afresh, so a rating that completes a pair meanwhile is decided by the new rules either way.
    Idempotent: call it again to finish after an interruption."""
    candidates = (
        Pair.objects.filter(project=project, status__in=_RULED)
        .exclude(_adjudicated())
        .order_by("pk")
    )
    changed, after = 0, 0
    while ids := list(candidates.filter(pk__gt=after).values_list("pk", flat=True)[:_BATCH]):
        after = ids[-1]
        with transaction.atomic():
            changed += _filter_apply_batch(project.pk, ids)
    return changed


def _filter_apply_batch(project_id: int, ids: list[int]) -> int:
    project = Project.objects.get(pk=project_id)
    # Lock by id only: a condition on the rating count would skip a pair whose deciding
    # rating is being committed right now (its snapshot still shows one rating fewer).
    pairs = list(
        Pair.objects.select_for_update(of=("self",))
        .filter(pk__in=ids)
        .exclude(_adjudicated())
        .order_by("pk")
    )
    due = [pair for pair in pairs if pair.rating_count >= pair.ratings_needed(project)]
    before = {pair.pk: pair.status for pair in due}
    return sum(1 for pair in pairs_decide(due, project) if pair.status != before[pair.pk])
