"""Judge accuracy against the human label, MMRB2 protocol (docs/architecture.md §6.2).

Each forward and each reverse verdict (and each sample) is one trial (a pointwise judge's
verdict, from its scores of each response alone, is one trial per sample); a trial is correct when
its canonical choice equals the pair's label; tie and invalid count as wrong; a failed call
(choice None) is left out of the denominator and counted as missing, as is a trial that was
never made.

Two "without ties" figures: `accuracy_without_ties` leaves out the tie trials only (an
unparsable answer stays wrong); `accuracy_without_ties_mjbench` leaves out every trial that
names no side, ties and unparsable answers alike, as MJ-Bench's personal/test.py does (its
`get_pred` maps anything but "0"/"1" to 0.5 and drops it).
"""

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

VerdictRow = tuple[int, str, int, str | None]  # pair id, order, sample, canonical choice


@dataclass
class JudgeTaskStats:
    accuracy: float | None
    correct: int
    evaluated: int
    missing: int
    invalid: int
    ties: int
    position_consistency: float | None
    accuracy_without_ties: float | None
    consistent_pairs: int
    accuracy_without_ties_mjbench: float | None = None

    def as_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


def judge_task_stats(
    verdicts: Iterable[VerdictRow],
    labels: Mapping[int, str],
    samples: int,
    per_pair: dict[int, list[int]] | None = None,
    orders: int = 2,
) -> JudgeTaskStats:
    """`labels` holds the evaluated pairs (kept, labelled A or B); verdicts on other pairs are
    ignored. `samples` is how many samples per order the judge was asked for, `orders` in how
    many orders (1: a pointwise judge, whose verdicts have none). `per_pair`, when given, is
    filled with pair -> [correct, evaluated] in the same pass (for intervals)."""
    correct = evaluated = invalid = ties = 0
    by_trial: dict[tuple[int, int], dict[str, str]] = defaultdict(dict)
    for pair_id, order, sample, choice in verdicts:
        label = labels.get(pair_id)
        if label is None or choice is None:
            continue
        evaluated += 1
        correct += choice == label
        if per_pair is not None:
            entry = per_pair.setdefault(pair_id, [0, 0])
            entry[0] += choice == label
            entry[1] += 1
        invalid += choice == "invalid"
        ties += choice == "tie"
        by_trial[(pair_id, sample)][order] = choice
    both = [t for t in by_trial.values() if "forward" in t and "reverse" in t]
    consistent = sum(1 for t in both if t["forward"] == t["reverse"] != "invalid")
    decisive = evaluated - ties
    sided = decisive - invalid
    return JudgeTaskStats(
        accuracy=correct / evaluated if evaluated else None,
        correct=correct,
        evaluated=evaluated,
        missing=max(len(labels) * orders * samples - evaluated, 0),
        invalid=invalid,
        ties=ties,
        position_consistency=consistent / len(both) if both else None,
        accuracy_without_ties=correct / decisive if decisive else None,
        consistent_pairs=len(both),
        accuracy_without_ties_mjbench=correct / sided if sided else None,
    )


def average_accuracy(task_accuracies: Iterable[float | None]) -> float | None:
    """The multi-task figure: the mean of the task accuracies, one per task with labelled
    pairs. Undefined when any of them is (a task without a figure): a mean over the tasks a
    judge happens to have figures for cannot be compared with a mean over all of them."""
    values = list(task_accuracies)
    known = [a for a in values if a is not None]
    if not values or len(known) < len(values):
        return None
    return sum(known) / len(known)


def tasks_covered(task_accuracies: Iterable[float | None]) -> int:
    """How many of the tasks have a figure (the average's coverage)."""
    return sum(a is not None for a in task_accuracies)
