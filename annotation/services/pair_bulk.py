"""Bulk actions of the pair browser: queue, ask for one more rating, mark gold, drop, on a
selection of a project's pairs. Each follows the rules of its single-pair service, and the
actions that have one go through it, pair by pair:

- queue: candidates and pairs the judge ensemble found easy go to annotation (the rule of
  `pairs_queue`, which queues candidates; a lead choosing pairs by hand may overrule the
  ensemble too). One conditional UPDATE per batch: a pair that moved on meanwhile is left.
- annotator: `pair_request_annotator` on each pair it applies to (not adjudicated, and being
  annotated or decided by the consensus), with the lead's note.
- gold: `gold_set` on the pairs that may become gold checks (candidate, easy or queued, nobody
  rated them) and have an imported reference label A or B, which becomes the expected side.
- drop: `pair_adjudicate(decision="drop")` with the lead's note on each pair not dropped yet
  (gold checks aside: their expected side is changed on the pair page).

`pair_bulk_preview` says which pairs an action would change (the confirmation step's count)
and why the others would not; `pair_bulk_apply` re-checks under each service's own lock, so
a pair that changed between the two is counted as left, never changed twice. Only pairs of
`project` are read: ids of another project's pairs change nothing. Each pair is its own
transaction (a long selection is never one long lock); the result counts what changed. The
decisions an action changes are announced as its single-pair service announces them
(`pair.decided`), all of one action together (one burst).
"""

from collections import Counter
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from functools import partial
from typing import TYPE_CHECKING, TypedDict

from django.contrib.auth.models import User
from django.core.exceptions import PermissionDenied
from django.db.models import Exists, OuterRef
from django.utils import timezone
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from annotation.gold.models import GOLD_FROM_STATUSES
from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Adjudication, Rating
from annotation.services.adjudication import (
    MAX_NOTE_CHARS,
    pair_adjudicate,
    pair_request_annotator,
)
from content.lifecycle import OPEN_STATUSES
from content.models import Pair
from core.errors import DomainError, Invalid
from projects.access import led_projects
from projects.events import published_together
from projects.models import Project, Task

if TYPE_CHECKING:  # the stubs' types (a lazy translation, an annotated row): not at run time
    from django_stubs_ext import StrOrPromise, WithAnnotations

ACTIONS = {
    "queue": gettext_lazy("Queue for annotation"),
    "annotator": gettext_lazy("Ask for one more rating"),
    "gold": gettext_lazy("Mark as gold checks"),
    "drop": gettext_lazy("Drop"),
}
NEEDS_NOTE = ("annotator", "drop")
QUEUEABLE = (Pair.Status.CANDIDATE, Pair.Status.EASY)
MAX_PAIRS = 50_000
_BATCH = 500


@dataclass
class BulkPreview:
    action: str
    changes: list[int]  # ids of the pairs the action changes
    left: Counter[str] = field(default_factory=Counter)  # why the others stay as they are

    @property
    def label(self) -> "StrOrPromise":
        return ACTIONS[self.action]

    @property
    def reasons(self) -> list[tuple[str, int]]:
        """(why, how many pairs), most pairs first (a template cannot read a Counter)."""
        return self.left.most_common()


@dataclass
class BulkResult:
    action: str
    changed: int
    left: int


def _batches(ids: list[int]) -> Iterable[list[int]]:
    for start in range(0, len(ids), _BATCH):
        yield ids[start : start + _BATCH]


def _checked(action: str, pair_ids: Iterable[int]) -> list[int]:
    if action not in ACTIONS:
        raise Invalid(_("Choose an action."), fields={"action": [_("Choose an action.")]})
    ids = sorted({int(pk) for pk in pair_ids})
    if not ids:
        raise Invalid(_("Select at least one pair."), fields={"pairs": [_("Select a pair.")]})
    if len(ids) > MAX_PAIRS:
        raise Invalid(_("Select at most %(count)s pairs at once.") % {"count": MAX_PAIRS})
    return ids


class _Answered(TypedDict):
    adjudicated: bool  # a lead decided the pair
    rated: bool  # an annotator rated it


def _why_left(action: str, pair: "WithAnnotations[Pair, _Answered]") -> str | None:
    """Why the action leaves this pair as it is (None: it changes it)."""
    if action == "queue":
        return (
            None
            if pair.status in QUEUEABLE
            else _("already %(status)s") % {"status": pair.get_status_display()}
        )
    if action == "annotator":
        if pair.adjudicated:
            return _("decided by a lead")
        if pair.status not in OPEN_STATUSES and pair.decided_by != Pair.DecidedBy.CONSENSUS:
            return _("not being annotated")
        return None
    if action == "gold":
        if pair.status == Pair.Status.GOLD:
            return _("already a gold check")
        if pair.status not in GOLD_FROM_STATUSES or pair.rated:
            return _("rated, or past annotation")
        if pair.reference_label not in ("A", "B"):
            return _("no imported label A or B for the expected side")
        return None
    if pair.status == Pair.Status.GOLD:  # drop
        return _("a gold check")
    return _("already dropped") if pair.status == Pair.Status.DROPPED else None


def pair_bulk_preview(*, project: Project, action: str, pair_ids: Iterable[int]) -> BulkPreview:
    """Which of these pairs of `project` the action would change, and why the others would
    not (ids of pairs outside the project count as "not in this project")."""
    ids = _checked(action, pair_ids)
    preview = BulkPreview(action=action, changes=[])
    found = 0
    for batch in _batches(ids):
        pairs = (
            Pair.objects.filter(project=project, pk__in=batch)
            .annotate(
                adjudicated=Exists(Adjudication.objects.filter(pair=OuterRef("pk"))),
                rated=Exists(Rating.objects.filter(pair=OuterRef("pk"))),
            )
            .only("pk", "status", "decided_by", "reference_label", "task_id")
            .order_by("pk")
        )
        for pair in pairs:
            found += 1
            reason = _why_left(action, pair)
            if reason is None:
                preview.changes.append(pair.pk)
            else:
                preview.left[reason] += 1
    if missing := len(ids) - found:
        preview.left[_("not in this project")] += missing
    return preview


def pair_bulk_apply(
    *, project: Project, lead: User, action: str, pair_ids: Iterable[int], note: str = ""
) -> BulkResult:
    """Apply the action to the pairs of `project` among `pair_ids` that it changes (see
    `pair_bulk_preview`); returns how many changed and how many were left. `lead` must lead
    the project (the single-pair services check it again). Raises Invalid for an unknown
    action, an empty selection, or a missing note where the action needs one."""
    ids = _checked(action, pair_ids)
    if not led_projects(lead).filter(pk=project.pk).exists():
        raise PermissionDenied("only the project's leads may change its pairs")
    note = (note or "").strip()
    if action in NEEDS_NOTE and not note:
        raise Invalid(
            _("Write a note saying why."), fields={"note": [_("Write a note saying why.")]}
        )
    if len(note) > MAX_NOTE_CHARS:
        raise Invalid(_("Keep the note under %(count)s characters.") % {"count": MAX_NOTE_CHARS})
    due = pair_bulk_preview(project=project, action=action, pair_ids=ids).changes
    with published_together():  # the decisions of every pair's transaction, as one burst
        changed = _APPLY[action](project, lead, due, note)
    return BulkResult(action=action, changed=changed, left=len(ids) - changed)


def _queue(project: Project, lead: User, ids: list[int], note: str) -> int:
    changed = 0
    for batch in _batches(ids):
        changed += Pair.objects.filter(project=project, pk__in=batch, status__in=QUEUEABLE).update(
            status=Pair.Status.QUEUED, updated_at=timezone.now()
        )
    return changed


def _one_by_one(call: Callable[[], object]) -> int:
    """How many calls succeeded; a refusal (the pair changed since the preview) is a pair left."""
    try:
        call()
    except DomainError:
        return 0
    return 1


def _annotator(project: Project, lead: User, ids: list[int], note: str) -> int:
    return sum(_one_by_one(partial(pair_request_annotator, pk, lead, note)) for pk in ids)


def _drop(project: Project, lead: User, ids: list[int], note: str) -> int:
    decision = Adjudication.Decision.DROP
    return sum(_one_by_one(partial(pair_adjudicate, pk, lead, decision, note)) for pk in ids)


def _gold(project: Project, lead: User, ids: list[int], note: str) -> int:
    """Per task, all at once (gold_set is all or nothing); when a pair changed meanwhile, the
    task's pairs one by one, so the others still become gold checks."""
    by_task: dict[int, list[GoldEntry]] = {}
    for batch in _batches(ids):
        rows = Pair.objects.filter(project=project, pk__in=batch).values_list(
            "task_id", "external_id", "reference_label"
        )
        for task_id, external_id, side in rows:
            entry = GoldEntry(external_id, side, note[:2000])
            by_task.setdefault(task_id, []).append(entry)
    changed = 0
    for task in Task.objects.filter(project=project, pk__in=list(by_task)):
        entries = by_task[task.pk]
        try:
            changed += gold_set(task, entries, by=lead)
        except DomainError:
            for entry in entries:
                try:
                    changed += gold_set(task, [entry], by=lead)
                except DomainError:
                    continue
    return changed


_APPLY = {"queue": _queue, "annotator": _annotator, "gold": _gold, "drop": _drop}
