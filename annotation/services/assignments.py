"""Handing pairs to annotators (docs/architecture.md §5.4).

Rules: every open pair gets N distinct annotators (N + `extra_annotators` when a lead asked
for more); nobody sees the same pair twice (not even after a skip); at most that many
live-or-submitted assignments per pair; a lease that expires gives its slot back; partly rated
pairs go first so that pairs complete early.

Concurrency: a claim locks the pair row (`SELECT … FOR UPDATE SKIP LOCKED` on PostgreSQL, so
claimers never wait on each other) and recounts the pair's live assignments with a fresh
statement before inserting; every write that can add a live assignment holds that lock. On
SQLite, transactions are IMMEDIATE and so already serialised. The unique constraints on
(pair, annotator) remain the last line of defence. A member with a quota has their
membership row locked before any pair (annotation/services/quotas.py): the one lock order
is membership → pair → assignment. A lead's release (`assignment_release`) locks pair then
assignment, like the annotator's own writes.
"""

import random
import time
from datetime import datetime, timedelta
from enum import Enum
from typing import Final, Literal

from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Q
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_noop

from annotation.gold.due import gold_pair_due
from annotation.gold.qualification import HELD, qualification_next
from annotation.gold.services import annotator_paused, gold_assignment_create
from annotation.models import Assignment, Flag
from annotation.selectors.pairs import claimable_pairs, in_claim_order, live_assignments
from annotation.services.quotas import quota_reached
from content.lifecycle import RATEABLE_STATUSES
from content.models import Pair
from content.models.pair import RATINGS_NEEDED
from core.errors import NotFound, Refused
from projects.events import publish
from projects.models import Project, Task

_BUSY_RETRIES = 200  # × 5–30 ms: a few seconds at most under extreme contention


class _Busy(Enum):
    BUSY = "busy"


# A claim attempt found only pairs that others are claiming this instant: try again.
_BUSY: Final = _Busy.BUSY


# The reasons the annotate page offers for a skip (an annotator may add a note to any).
# Stored in English (the skip reason is data); the page translates the label it shows.
SKIP_PRESETS = (
    gettext_noop("Outside my expertise"),
    gettext_noop("Cannot decide without more context"),
    gettext_noop("Both responses are equally unusable"),
    gettext_noop("An image does not load"),
)


class AssignmentClosed(Refused):
    """The assignment can no longer take this action; the message says why, for the user."""


def _lease_end(task: Task, now: datetime) -> datetime:
    return now + timedelta(minutes=task.project.lease_minutes)


def pair_has_free_slot(
    pair_id: int, limit: int, now: datetime, *, excluding: Assignment | None = None
) -> bool:
    """Whether the pair has fewer than `limit` live assignments (besides `excluding`).
    Call with the pair row locked: the count is a fresh statement, so it sees every claim."""
    live = Assignment.objects.filter(live_assignments(now), pair_id=pair_id)
    if excluding is not None:
        live = live.exclude(pk=excluding.pk)
    return live.count() < limit


def _claim_census(pair_id: int, user: User, now: datetime) -> tuple[bool, int, tuple[int, int]]:
    """The pair's assignments in one fresh statement (call with the pair row locked): whether
    the user has one, how many are live, and how many show it swapped and straight."""
    census = Assignment.objects.filter(pair_id=pair_id).aggregate(
        mine=Count("id", filter=Q(annotator=user)),
        live=Count("id", filter=live_assignments(now)),
        n_swapped=Count("id", filter=Q(swapped=True)),
        n_straight=Count("id", filter=Q(swapped=False)),
    )
    return bool(census["mine"]), census["live"], (census["n_swapped"], census["n_straight"])


def _balanced_side(sides: tuple[int, int]) -> bool:
    """`swapped` for a new assignment: the less used side of the pair (its assignments
    (swapped, straight)), else a coin toss, so that the position of A averages out across the
    pair's annotators."""
    swapped, straight = sides
    if swapped != straight:
        return swapped < straight
    return random.random() < 0.5


def _resume(user: User, task: Task, now: datetime) -> Assignment | None:
    """The user's current lease in the task, renewed; an expired one only if its slot is free."""
    leases = Assignment.objects.filter(
        annotator=user, pair__task=task, status=Assignment.Status.LEASED
    ).order_by("created_at", "id")
    for lease in leases:
        pair = Pair.objects.select_for_update().filter(pk=lease.pair_id).first()
        # Every lease is given an end; one without reads as expired, as in the slot count.
        live = lease.lease_expires_at is not None and lease.lease_expires_at > now
        if (
            pair is not None
            and pair.status in RATEABLE_STATUSES
            and (
                live
                or pair.status == Pair.Status.GOLD  # a gold check has no slots to give back
                or pair_has_free_slot(
                    pair.pk, pair.ratings_needed(task.project), now, excluding=lease
                )
            )
        ):
            lease.lease_expires_at = _lease_end(task, now)
            lease.save(update_fields=["lease_expires_at"])
            return lease
        lease.status = Assignment.Status.EXPIRED
        lease.save(update_fields=["status"])
    return None


def assignment_claim(user: User, task: Task, *, now: datetime | None = None) -> Assignment | None:
    """The user's next assignment in the task (their current lease if they have one; a gold
    check when one is due), or None when nothing is left for them, a failed gold check
    (or a lead) paused their access to the task, or the task is archived."""
    for _attempt in range(_BUSY_RETRIES):
        with transaction.atomic():
            outcome = _claim_once(user, task, now or timezone.now())
        if outcome is not _BUSY:
            return outcome
        # The only pairs left are being claimed by others this instant: wait for their short
        # transactions (outside ours, holding no lock) rather than say that nothing is left.
        time.sleep(random.uniform(0.005, 0.03))
    return None


def _claim_once(user: User, task: Task, now: datetime) -> Assignment | Literal[_Busy.BUSY] | None:
    if task.archived_at is not None:  # archived by a lead (projects/services/tasks.py)
        return None
    current = _resume(user, task, now)
    if current is not None:
        return current
    if annotator_paused(user, task):
        return None
    qualifying = qualification_next(user, task)
    if qualifying is HELD:
        return None
    if qualifying is not None:
        return gold_assignment_create(user, qualifying, _lease_end(task, now))
    if quota_reached(user, task, now):  # their current lease, resumed above, still finishes
        return None
    candidates = in_claim_order(claimable_pairs(user, now).filter(task=task), task)
    # Gold checks are mixed into real work, never served alone once the real queue is empty.
    gold_pair_id = gold_pair_due(user, task)
    if gold_pair_id is not None and candidates.exists():
        return gold_assignment_create(user, gold_pair_id, _lease_end(task, now))
    passed_over: list[int] = []
    while True:
        locked = (
            candidates.exclude(pk__in=passed_over)
            .select_for_update(skip_locked=True, of=("self",))
            .annotate(needed=RATINGS_NEEDED)
            .values_list("pk", "needed")
            .first()
        )
        if locked is None:
            return _BUSY if candidates.exclude(pk__in=passed_over).exists() else None
        pair_id, limit = locked
        # The candidate query's snapshot may predate a claim committed just before we took
        # the lock: recount now that nobody else can add to this pair.
        mine, live, sides = _claim_census(pair_id, user, now)
        if mine or live >= limit:
            passed_over.append(pair_id)
            continue
        return Assignment.objects.create(
            pair_id=pair_id,
            annotator=user,
            swapped=_balanced_side(sides),
            lease_expires_at=_lease_end(task, now),
        )


class AssignmentNotFound(NotFound):
    """No assignment of this user with this id (someone else's answers the same)."""


def lock_own_assignment(assignment_id: int, user: User) -> tuple[Assignment, Pair]:
    """Lock the user's assignment and its pair (pair first, the order every writer uses).
    Raises AssignmentNotFound when the assignment is not the user's, or is a placeholder's:
    imported ratings are no one's to change or skip, whatever session or token reaches here
    (projects.models.PlaceholderAccount)."""
    pair_id = (
        Assignment.objects.filter(
            pk=assignment_id, annotator=user, annotator__placeholder__isnull=True
        )
        .values_list("pair_id", flat=True)
        .first()
    )
    if pair_id is None:
        raise AssignmentNotFound(_("No such assignment."))
    pair = (
        Pair.objects.select_for_update(of=("self",))
        .select_related("project", "task")
        .get(pk=pair_id)
    )
    return Assignment.objects.select_for_update().get(pk=assignment_id), pair


def assignment_skip(
    assignment_id: int, user: User, reason: str, *, now: datetime | None = None
) -> Assignment:
    """Give the pair back without rating it; the user will not get it again (unless they undo
    it within the grace period: annotation/services/skip_undo.py)."""
    reason = reason.strip()
    if not reason:
        raise AssignmentClosed(_("Say briefly why you skip this pair."))
    with transaction.atomic():
        assignment, _pair = lock_own_assignment(assignment_id, user)
        if assignment.status == Assignment.Status.SKIPPED:
            return assignment  # a repeated skip
        if assignment.status == Assignment.Status.SUBMITTED:
            raise AssignmentClosed(_("You already rated this pair; it cannot be skipped now."))
        assignment.status = Assignment.Status.SKIPPED
        assignment.skip_reason = reason[:2000]
        assignment.skipped_at = now or timezone.now()
        assignment.save(update_fields=["status", "skip_reason", "skipped_at"])
        return assignment


def assignment_flag(
    assignment_id: int, user: User, reason: str, note: str = "", *, now: datetime | None = None
) -> Flag:
    """Report the pair to the leads (broken or unsafe content) and skip it (undone, within
    the grace period and before a lead acts on it, by annotation/services/skip_undo.py)."""
    if reason not in Flag.Reason.values:
        raise AssignmentClosed(_("Choose why you flag this pair."))
    with transaction.atomic():
        assignment, pair = lock_own_assignment(assignment_id, user)
        existing = Flag.objects.filter(assignment=assignment).first()
        if existing is not None:
            return existing  # a repeated flag
        if assignment.status == Assignment.Status.SUBMITTED:
            raise AssignmentClosed(_("You already rated this pair; it cannot be flagged now."))
        assignment.status = Assignment.Status.SKIPPED
        assignment.skip_reason = f"flagged: {Flag.Reason(reason).label}"
        assignment.skipped_at = now or timezone.now()
        assignment.save(update_fields=["status", "skip_reason", "skipped_at"])
        flag = Flag.objects.create(
            pair_id=assignment.pair_id,
            assignment=assignment,
            reported_by=user,
            reason=reason,
            note=note.strip()[:2000],
        )
        about = {"flag": flag.pk, "pair": pair.pk, "task": pair.task.slug, "by": user.username}
        about["reason"] = flag.get_reason_display()
        publish(pair.project, "flag.raised", about, actor=user)
        return flag


class LeaseNotFound(NotFound):
    """No assignment in progress with this id in the lead's project."""


def assignment_release(
    *, project: Project, assignment_id: int, by: User | None = None, now: datetime | None = None
) -> Assignment:
    """A lead (`by`) gives an annotator's pair in progress back to the pool: the lease ends
    now, its slot is free for the next claim, the annotator's page finds nothing to submit
    (the annotator never gets the same pair again, as after a skip); "pair.released" says so
    (the audit trail records it). Another project's assignment, one already finished or an
    imported rating's answer `LeaseNotFound`, like a missing id."""
    with transaction.atomic():
        pair_id = (
            Assignment.objects.filter(
                pk=assignment_id,
                pair__project=project,
                status=Assignment.Status.LEASED,
                annotator__placeholder__isnull=True,
            )
            .values_list("pair_id", flat=True)
            .first()
        )
        if pair_id is None:
            raise LeaseNotFound(_("No pair in progress with this id."))
        Pair.objects.select_for_update(of=("self",)).filter(pk=pair_id).first()
        assignment = Assignment.objects.select_for_update().get(pk=assignment_id)
        if assignment.status != Assignment.Status.LEASED:  # submitted or skipped meanwhile
            raise LeaseNotFound(_("No pair in progress with this id."))
        assignment.status = Assignment.Status.EXPIRED
        assignment.lease_expires_at = now or timezone.now()
        assignment.save(update_fields=["status", "lease_expires_at"])
        pair = Pair.objects.select_related("task").get(pk=pair_id)
        about = {"assignment": assignment.pk, "pair": pair.pk, "task": pair.task.slug}
        about["annotator"] = assignment.annotator.username
        publish(project, "pair.released", about, actor=by)
    return assignment
