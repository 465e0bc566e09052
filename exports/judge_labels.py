"""Judge labels with a guarantee, for the export (docs/architecture.md §6.6).

When the project asks for them (`Project.judge_labels`), the task's pool (the pairs in the
experts' queue: queued, in progress, complete, kept, dropped) is put in the order of each pair's
uniform draw, which is the order the experts are served in by default. The judges' trials on a
pair give it a side and a confidence (`metrics/selective_labels.py::judge_vote`: ties and
answers naming no side count, so a lone vote among ties is unsure). At checkpoints of the pairs
decided at the front of that order (100, 200, 400, ...) a threshold is certified on them: a pair
kept with the judges' side agrees, a dropped pair or a kept one with the other side does not
(`metrics/selective_labels.py::calibrate`). The pool's undecided pairs with no label yet get the
judges' side where their confidence reaches it, and the export states, at the project's
confidence 1 − δ, the least share of those labels that agree with the experts.

Candidate pairs are not in the experts' pool, so the calibration pairs say nothing about them:
they get no judge label. Neither do pairs whose label was imported (the experts' to decide).
"""

import math
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from django.db.models import Count, Q

from content.lifecycle import DECIDED_STATUSES, IN_THE_QUEUE, POOL_STATUSES
from content.models import Pair
from judging.models import Verdict
from metrics.selective_labels import (
    Calibration,
    calibrate,
    judge_vote,
    labelled_agreement_at_least,
)
from projects.models import Project, Task


def _floor_percent(share: float) -> str:
    # Rounded down: the export never claims more than was proven.
    return f"{math.floor(1000 * share + 1e-9) / 10:g} %"


@dataclass
class JudgeLabels:
    calibration: Calibration
    labels: dict[int, str] = field(default_factory=dict)  # undecided pair -> the judges' side
    # With probability >= 1 - delta, at least this share of `labels` agree with the experts.
    agreement_at_least: float | None = None

    def source(self) -> str:
        """How an exported row names its label's source: what is proven of these labels."""
        if self.agreement_at_least is None:
            return ""
        return (
            f"judges, agreement ≥ {_floor_percent(self.agreement_at_least)} "
            f"at {_floor_percent(1 - self.calibration.delta)} confidence"
        )

    def guarantee(self) -> str:
        calibration = self.calibration
        if calibration.threshold is None:
            return (
                f"no threshold certified yet (next checkpoint: the first "
                f"{calibration.next_checkpoint} pairs by draw decided)"
            )
        statement = (
            f"with probability ≥ {_floor_percent(1 - calibration.delta)}: at most "
            f"{calibration.disagreements_at_most} of the {calibration.covered} pool pairs with "
            f"confidence ≥ {calibration.threshold:.4g} disagree with the experts (dropped "
            f"counts as disagreeing), rated or not"
        )
        if self.agreement_at_least is None:
            return statement + "; no label given"
        return (
            f"{statement}; hence at least {_floor_percent(self.agreement_at_least)} of the "
            f"{len(self.labels)} judge labels in this export agree"
        )

    def manifest(self) -> dict[str, Any]:
        return {
            **self.calibration.as_dict(),
            "labelled": len(self.labels),
            "labelled_agreement_at_least": self.agreement_at_least,
            "source": self.source(),
            "guarantee": self.guarantee(),
        }


def _votes(task: Task) -> dict[int, tuple[int, int, int]]:
    """Per pool pair of the task: the judges' trials naming A, naming B, and answering at all
    (ties and answers naming no side included; failed calls are no answer)."""
    rows = (
        Verdict.objects.filter(
            pair__task=task, pair__status__in=POOL_STATUSES, choice__isnull=False
        )
        .values("pair_id")
        .annotate(
            a=Count("id", filter=Q(choice="A")),
            b=Count("id", filter=Q(choice="B")),
            answered=Count("id"),
        )
        .values_list("pair_id", "a", "b", "answered")
        .order_by()
    )
    return {pair_id: (a, b, answered) for pair_id, a, b, answered in rows}


def judge_labels(project: Project, task: Task) -> JudgeLabels:
    """The calibration at the task's latest checkpoint and the labels it lets the judges give."""
    pairs = list(
        Pair.objects.filter(task=task, status__in=POOL_STATUSES)
        .order_by("draw", "id")
        .values_list("pk", "status", "label")
    )
    votes = _votes(task)
    sides, confidence = [], []
    for pk, _status, _label in pairs:
        side, sure = judge_vote(*votes.get(pk, (0, 0, 0)))
        sides.append(side)
        confidence.append(sure)
    decided = np.array([status in DECIDED_STATUSES for _pk, status, _label in pairs], dtype=bool)
    # A dropped pair, or one kept without a side, gets none of the judges' labels right.
    agrees = np.array(
        [
            status == Pair.Status.KEPT and label == side
            for (_pk, status, label), side in zip(pairs, sides, strict=True)
        ],
        dtype=bool,
    )
    front = int(np.argmin(decided)) if not decided.all() else len(pairs)
    calibration = calibrate(
        confidence,
        agrees[:front],
        alpha=project.judge_labels_alpha,
        delta=project.judge_labels_delta,
    )
    result = JudgeLabels(calibration)
    if calibration.threshold is None:
        return result
    above = np.array(confidence) >= calibration.threshold
    labels = {
        pk: side
        for (pk, status, label), side, sure in zip(pairs, sides, above, strict=True)
        if sure and side is not None and status in IN_THE_QUEUE and not label
    }
    # Every covered pair decided so far, at the checkpoint or since, is known: what the
    # calibration allows beyond their disagreements is all the labels given can hold.
    shown = int((above & decided & ~agrees).sum())
    bound = labelled_agreement_at_least(calibration, shown, len(labels))
    if bound:  # None or 0: nothing worth stating, so no label
        result.labels, result.agreement_at_least = labels, bound
    return result
