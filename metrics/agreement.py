"""Human agreement figures (docs/architecture.md §6.1). Pure functions over plain data; None when a
figure is undefined (no ratings, a single value), never an exception."""

import math
from collections.abc import Hashable, Iterable, Mapping
from typing import Literal, TypeVar

import krippendorff
import numpy as np

from projects.scale import side_of

# The levels of measurement Arbiter reports alpha at (krippendorff also knows nominal, ratio).
AlphaLevel = Literal["ordinal", "interval"]
ALPHA_LEVELS: tuple[AlphaLevel, ...] = ("ordinal", "interval")

_Unit = TypeVar("_Unit", bound=Hashable)


def krippendorff_alpha(
    scores_by_unit: Iterable[list[int]], scale: int, level: AlphaLevel
) -> float | None:
    """Krippendorff's alpha of scores on 1..scale, one list of scores per unit (pair).

    Only units with two or more scores are pairable. With no pairable unit, or a single value
    across them, the expected disagreement is zero and alpha is undefined: None.
    """
    pairable = [unit for unit in scores_by_unit if len(unit) >= 2]
    if not pairable or len({score for unit in pairable for score in unit}) < 2:
        return None
    # Sized to the largest score too: a project whose K was lowered after rating must still
    # report rather than crash.
    width = max(scale, max(score for unit in pairable for score in unit))
    counts = np.zeros((len(pairable), width), dtype=np.float64)
    for row, unit in enumerate(pairable):
        for score in unit:
            counts[row, score - 1] += 1
    with np.errstate(divide="ignore", invalid="ignore"):
        value = krippendorff.alpha(
            value_counts=counts,
            value_domain=list(range(1, width + 1)),
            level_of_measurement=level,
        )
    return float(value) if math.isfinite(value) else None


def unanimous_direction(
    scores_by_unit: Iterable[list[int]], center: float, required: int
) -> float | None:
    """Share of complete pairs (at least `required` ratings) whose ratings all fall on the same
    side of the centre; all at the centre counts as unanimous."""
    complete = [unit for unit in scores_by_unit if len(unit) >= required]
    if not complete:
        return None
    unanimous = sum(1 for unit in complete if len({side_of(s, center) for s in unit}) == 1)
    return unanimous / len(complete)


def rater_label_agreement(
    scores_by_unit: Mapping[_Unit, list[int]], labels: Mapping[_Unit, str], center: float
) -> float | None:
    """Share of individual ratings whose side matches their pair's label (A or B).
    Pairs without a side label are left out; a rating at the centre matches nothing."""
    total = matched = 0
    for unit, scores in scores_by_unit.items():
        label = labels.get(unit)
        if label not in ("A", "B"):
            continue
        total += len(scores)
        matched += sum(1 for s in scores if side_of(s, center) == label)
    return matched / total if total else None
