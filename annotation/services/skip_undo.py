"""Taking back a skip or a flag: the annotate page's Undo and the API's `undo`.

Rules (annotation.selectors.undoable_skip offers the button by the same ones):
- only the annotator's own assignment (anyone else's raises AssignmentNotFound, answered like
  a missing id);
- only the last thing they finished in the task: a skip followed by a rating, or by another
  skip, is final (Undo is for a slip just made, not a history to rewind);
- within the project's grace period for correcting a rating (`edit_grace_minutes`), counted
  from the skip;
- while the pair is still being annotated, the task is not archived and the pair has a slot
  for them (the skip gave theirs back: another annotator may have taken it meanwhile);
- a flag only before a lead acted on it (resolved it by adjudicating the pair or making it a
  gold check), and a qualification pair only before the qualification was decided (a skipped
  one counts as a wrong answer there).

Undone, the assignment is leased to the annotator again with a fresh lease: it keeps its place
(the oldest of their leases, so the pair shown next; the pair claimed after the skip waits
behind it). A flag is deleted and `flag.withdrawn` published, so the leads' notification of it
goes too (notifications/receivers.py; no webhook carries flags). What cannot be called back
is an e-mail a lead asked for (off by default for flags).

Concurrency: the pair, then the assignment, are locked (lock_own_assignment, the order every
writer uses), and every rule is checked under those locks: of two undos at once, the second
finds the pair leased again and is refused.
"""

from datetime import datetime, timedelta

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.models import Assignment, Flag, GoldAnswer, Qualification
from annotation.selectors.assignments import last_finished
from annotation.services.assignments import (
    AssignmentClosed,
    lock_own_assignment,
    pair_has_free_slot,
)
from content.lifecycle import RATEABLE_STATUSES, within_grace
from content.models import Pair
from projects.events import publish


class UndoRefused(AssignmentClosed):
    """The skip or flag cannot be taken back; the message says why, for the user."""


def assignment_undo(*, assignment_id: int, user: User, now: datetime | None = None) -> Assignment:
    """Give the user back the pair they last skipped or flagged (see the module's rules).
    Returns the assignment, leased again. Raises AssignmentNotFound when it is not
    theirs, UndoRefused (409) when it cannot be undone."""
    now = now or timezone.now()
    with transaction.atomic():
        assignment, pair = lock_own_assignment(assignment_id, user)
        task = pair.task
        if assignment.status != Assignment.Status.SKIPPED:
            raise UndoRefused(_("There is nothing to undo on this pair: it is not skipped."))
        last = last_finished(user, task)
        if last is None or last.pk != assignment.pk:
            raise UndoRefused(_("Only your last action can be undone; you have gone on since."))
        if not within_grace(pair.project, assignment.skipped_at, now):
            raise UndoRefused(_("The time to undo this skip is over."))
        if task.archived_at is not None or pair.status not in RATEABLE_STATUSES:
            raise UndoRefused(_("This pair is no longer being annotated."))
        if pair.status != Pair.Status.GOLD and not pair_has_free_slot(
            pair.pk, pair.ratings_needed(pair.project), now, excluding=assignment
        ):
            raise UndoRefused(_("This pair went to another annotator meanwhile."))
        if _qualification_decided(user, pair):
            raise UndoRefused(_("Your qualification result already counts this skip."))
        flag = Flag.objects.select_for_update().filter(assignment=assignment).first()
        if flag is not None:
            _flag_withdraw(flag, pair, user)
        assignment.status = Assignment.Status.LEASED
        assignment.skip_reason = ""
        assignment.skipped_at = None
        assignment.lease_expires_at = now + timedelta(minutes=pair.project.lease_minutes)
        assignment.save(update_fields=["status", "skip_reason", "skipped_at", "lease_expires_at"])
        return assignment


def _qualification_decided(user: User, pair: Pair) -> bool:
    if pair.status != Pair.Status.GOLD:
        return False
    return (
        GoldAnswer.objects.filter(pair=pair, qualification=True).exists()
        and Qualification.objects.filter(task_id=pair.task_id, annotator=user).exists()
    )


def _flag_withdraw(flag: Flag, pair: Pair, user: User) -> None:
    if flag.resolved_at is not None:
        raise UndoRefused(_("A lead has already acted on your flag, so it cannot be withdrawn."))
    about = {"flag": flag.pk, "pair": pair.pk, "task": pair.task.slug, "by": user.username}
    flag.delete()
    publish(pair.project, "flag.withdrawn", about, actor=user)
