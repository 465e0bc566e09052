"""The decision of a pair: the consensus of its ratings and the label and status that follow
from it (docs/architecture.md §5.5), and its announcement.

The lifecycle it applies (statuses, their groups, the keep/drop rules, the grace period) is
content/lifecycle.py; this module adds what needs the ratings. Every path that changes a
pair's decision ends here and is announced (`pair.decided`, `task.complete`, published with
its transaction): one pair from its ratings or a lead (`pair_decide`), many on a settings
change, from the pair browser's bulk actions or an import (`pairs_decide`, or `decision_set`
then `decisions_announce` for pairs made by the import). The events of one call are
published together (projects/events.py::published_together): a thousand decisions are one
burst for the listeners that work per burst (the dashboards' refresh, webhook deliveries)."""

from collections import defaultdict
from dataclasses import dataclass

from django.contrib.auth.models import User
from django.utils import timezone

from annotation.models import Adjudication, Rating
from annotation.selectors.pairs import latest_adjudications
from content.lifecycle import (
    ANNOUNCED_DECIDERS,
    DECIDED_STATUSES,
    IN_THE_QUEUE,
    OPEN_STATUSES,
    PairStatus,
    kept,
)
from content.models import Pair
from projects.events import publish, published_together
from projects.models import Project
from projects.scale import side_of


@dataclass(frozen=True)
class Consensus:
    mean: float
    span: int
    label: str  # "A", "B" or "" (mean exactly at the centre)
    keep: bool


def mean_and_span(scores: list[int]) -> tuple[float, int]:
    """The mean and the span (max − min) of a rated pair's canonical scores. The one
    definition: `decision_set` stores them on the pair (`consensus_mean`, `consensus_span`),
    and every page, export and API reads the stored columns."""
    return sum(scores) / len(scores), max(scores) - min(scores)


def consensus_of(scores: list[int], project: Project) -> Consensus:
    """Mean, span and label of a complete pair, and whether the project's rules keep it."""
    mean, span = mean_and_span(scores)
    return _consensus(mean, span, project)


def _consensus(mean: float, span: int, project: Project) -> Consensus:
    """Kept or dropped by the project's rules (content/lifecycle.py)."""
    return Consensus(
        mean=mean, span=span, label=side_of(mean, project.center), keep=kept(mean, span, project)
    )


_ADJUDICATED: dict[str, tuple[str, PairStatus]] = {
    Adjudication.Decision.KEEP_A: ("A", Pair.Status.KEPT),
    Adjudication.Decision.KEEP_B: ("B", Pair.Status.KEPT),
    Adjudication.Decision.DROP: ("", Pair.Status.DROPPED),
}


def decision_set(
    pair: Pair, scores: list[int], adjudication: Adjudication | None, project: Project
) -> None:
    """Set the pair's derived columns; the caller saves them (pairs_decide does, for a list).
    Precedence of the label: adjudication, consensus of at least N + extra ratings, imported
    reference label."""
    pair.rating_count = len(scores)
    spread = mean_and_span(scores) if scores else None
    pair.consensus_mean, pair.consensus_span = spread or (None, None)
    if pair.status == Pair.Status.GOLD:
        return  # a gold check measures annotators; its answers never decide it
    if adjudication is not None:
        pair.label, pair.status = _ADJUDICATED[adjudication.decision]
        pair.decided_by = Pair.DecidedBy.ADJUDICATION
    elif spread is not None and len(scores) >= pair.ratings_needed(project):
        consensus = _consensus(*spread, project)
        pair.label = consensus.label
        pair.status = Pair.Status.KEPT if consensus.keep else Pair.Status.DROPPED
        pair.decided_by = Pair.DecidedBy.CONSENSUS
    elif pair.reference_label in ("A", "B", "tie"):
        pair.label = pair.reference_label if pair.reference_label != "tie" else ""
        pair.decided_by = Pair.DecidedBy.IMPORTED
    else:
        pair.label = ""
        pair.decided_by = Pair.DecidedBy.NONE


def decisions_announce(
    changes: list[tuple[Pair, tuple[str, str]]], project: Project, *, actor: User | None = None
) -> None:
    """Tell the project's listeners (projects/events.py) which pairs were decided (or decided
    otherwise), each (pair, its (status, label) before) once saved, `by` what decided it
    (consensus or adjudication; a label imported alone is decided by no one here), and which
    tasks are complete because their last pairs in the experts' queue were decided: one query
    for the tasks, whatever the number of pairs, all published together. Silent for a pair
    whose decision did not change."""
    decided = [
        (pair, before)
        for pair, before in changes
        if pair.status in DECIDED_STATUSES
        and pair.decided_by in ANNOUNCED_DECIDERS
        and (pair.status, pair.label) != before
    ]
    if not decided:
        return
    with published_together():
        for pair, _ in decided:
            publish(
                project,
                "pair.decided",
                {"pair": pair.pk, "external_id": pair.external_id, "task": pair.task_id,
                 "status": pair.status, "label": pair.label, "by": str(pair.decided_by)},
                actor=actor,
            )  # fmt: skip
        left_the_queue = {pair.task_id for pair, before in decided if before[0] in IN_THE_QUEUE}
        if not left_the_queue:
            return
        still_queued = set(
            Pair.objects.filter(task_id__in=left_the_queue, status__in=IN_THE_QUEUE)
            .values_list("task_id", flat=True)
            .distinct()
        )
        for task_id in sorted(left_the_queue - still_queued):
            publish(project, "task.complete", {"task": task_id}, actor=actor)


DECIDED_FIELDS = [
    "rating_count",
    "consensus_mean",
    "consensus_span",
    "label",
    "status",
    "decided_by",
]


def pair_decide(
    pair: Pair,
    scores: list[int],
    adjudication: Adjudication | None,
    *,
    actor: User | None = None,
    also_saved: tuple[str, ...] = (),
) -> None:
    """Decide one pair the experts are rating (locked by the caller) from its ratings and its
    latest adjudication, save it, and announce its decision if that changed. Until it is
    decided, a pair with ratings (or one reopened for another rating) is in progress.
    `pairs_decide` does the same for many."""
    before = (pair.status, pair.label)
    decision_set(pair, scores, adjudication, pair.project)
    decided = pair.decided_by in (Pair.DecidedBy.CONSENSUS, Pair.DecidedBy.ADJUDICATION)
    in_hand = bool(scores) or pair.status not in OPEN_STATUSES
    if not decided and in_hand and pair.status != Pair.Status.GOLD:
        pair.status = Pair.Status.IN_PROGRESS
    pair.save(update_fields=[*DECIDED_FIELDS, *also_saved, "updated_at"])
    decisions_announce([(pair, before)], pair.project, actor=actor)


def pairs_decide(pairs: list[Pair], project: Project) -> list[Pair]:
    """Recompute the derived columns of many pairs with three queries; save the pairs whose
    columns changed (with a new `updated_at`), announce those decided otherwise (one more
    query when some left the experts' queue) and return them."""
    ids = [pair.id for pair in pairs]
    scores: dict[int, list[int]] = defaultdict(list)
    for pair_id, overall in Rating.objects.filter(pair_id__in=ids).values_list(
        "pair_id", "overall"
    ):
        scores[pair_id].append(overall)
    latest = latest_adjudications(ids)
    changed, decisions_before, now = [], {}, timezone.now()
    for pair in pairs:
        before = [getattr(pair, name) for name in DECIDED_FIELDS]
        decisions_before[pair.pk] = (pair.status, pair.label)
        decision_set(pair, scores[pair.id], latest.get(pair.id), project)
        if [getattr(pair, name) for name in DECIDED_FIELDS] != before:
            pair.updated_at = now
            changed.append(pair)
    Pair.objects.bulk_update(changed, [*DECIDED_FIELDS, "updated_at"], batch_size=500)
    decisions_announce([(pair, decisions_before[pair.pk]) for pair in changed], project)
    return changed
