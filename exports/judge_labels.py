"""Judge labels with a guarantee, for the export (issue 27; docs/architecture.md §6.6).

When the project asks for them (`Project.judge_labels`), the pairs of a task that no expert
decided (candidate, queued, in progress, complete) are exported with the judges' label where
the judges are confident enough: their soft vote (every judge's trials naming A or B) gives a
side and a confidence; a threshold is calibrated on the task's kept pairs, whose experts' label
is known, by fixed-sequence testing with Clopper–Pearson bounds
(`metrics/selective_labels.py::calibrate`), so that with probability at least 1 − δ, at least
1 − α of the labels given above it agree with the experts. *Assumption*: the pairs labelled
are exchangeable with the calibration pairs (rated in random order, or a uniform sample);
pairs rated because the judges were unsure (a sample chosen for information) are harder, so
the guarantee is then conservative for the rest. The rest stay unlabelled, for the experts.
"""

import math
from dataclasses import dataclass, field
from typing import Any

from django.db.models import Count, Q

from content.models import Pair
from judging.models import Verdict
from metrics.selective_labels import Calibration, calibrate, confidence_from_votes
from projects.models import Project, Task

UNDECIDED = (
    Pair.Status.CANDIDATE,
    Pair.Status.QUEUED,
    Pair.Status.IN_PROGRESS,
    Pair.Status.COMPLETE,
)


@dataclass
class JudgeLabels:
    calibration: Calibration
    labels: dict[int, str] = field(default_factory=dict)  # undecided pair -> the judges' side

    def source(self) -> str:
        """How an exported row names its label's source."""
        # Rounded down: the row never claims more than was tested.
        agreement = math.floor(1000 * (1 - self.calibration.alpha)) / 10
        confidence = math.floor(1000 * (1 - self.calibration.delta)) / 10
        return f"judges, agreement ≥ {agreement:g} % at {confidence:g} % confidence"

    def manifest(self) -> dict[str, Any]:
        return {**self.calibration.as_dict(), "labelled": len(self.labels), "source": self.source()}


def _votes(task: Task, **pairs: Any) -> dict[int, tuple[int, int]]:
    """Per pair of the task matching `pairs`: the judges' trials naming A and naming B."""
    rows = (
        Verdict.objects.filter(pair__task=task, choice__in=["A", "B"])
        .filter(**{f"pair__{key}": value for key, value in pairs.items()})
        .values("pair_id")
        .annotate(a=Count("id", filter=Q(choice="A")), b=Count("id", filter=Q(choice="B")))
        .values_list("pair_id", "a", "b")
        .order_by()
    )
    return {pair_id: (a, b) for pair_id, a, b in rows}


def judge_labels(project: Project, task: Task) -> JudgeLabels:
    """The calibration on the task's kept pairs and the labels it lets the judges give."""
    kept = dict(
        Pair.objects.filter(task=task, status=Pair.Status.KEPT, label__in=["A", "B"])
        .values_list("pk", "label")
        .order_by()
    )
    confidence, agrees = [], []
    for pair_id, (a, b) in _votes(task, status=Pair.Status.KEPT).items():
        if pair_id in kept:
            side, sure = confidence_from_votes(a / (a + b))
            confidence.append(sure)
            agrees.append(side == kept[pair_id])
    calibration = calibrate(
        confidence,
        agrees,
        alpha=project.judge_labels_alpha,
        delta=project.judge_labels_delta,
    )
    result = JudgeLabels(calibration)
    if calibration.threshold is None:
        return result
    # A pair with a label already (an import's experts') keeps it: the judges label the rest.
    for pair_id, (a, b) in _votes(task, status__in=UNDECIDED, label="").items():
        side, sure = confidence_from_votes(a / (a + b))
        if sure >= calibration.threshold:
            result.labels[pair_id] = side
    return result
