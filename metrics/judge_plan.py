"""The planner's numbers (docs/architecture.md §6.6): how many rated pairs a judge's figure needs
to be final at ± a half-width, and how many would tell the two closest judges apart.

A figure is final once c·SE ≤ h (metrics/sequential.py), so the planner solves c·s/√n·√(1 − n/M)
≤ h for n, s the estimator's spread per rated pair today (the planner's model: today's spreads
hold as more pairs are rated). Before 3 counted pairs there is no spread to read: the plan then
assumes the widest one Y's range allows (half the range), and says so.

Telling two judges apart: the monitored interval of their difference excludes 0 once
|gap| > c·SE. Planned for 80 % power at today's gap, SE must reach |gap| / (c + z₀.₈): about
2.04× the pairs of a half-width equal to the gap, the 50 %-power design. The difference is
monitored on the project's target like every figure, so it can only be told apart while its
interval is interim, i.e. down to a half-width of the target: a gap smaller than
(c + z₀.₈)/c × the target needs a finer target, which the plan names (`needs_target`).
"""

import math
from statistics import NormalDist
from typing import TYPE_CHECKING, Any

import numpy as np

from metrics import sequential
from metrics.kept_ratio import RatioPath
from metrics.ppi import ratings_needed

if TYPE_CHECKING:
    from metrics.judge_ppi import JudgeSample

POWER = 0.8
Z_POWER = NormalDist().inv_cdf(POWER)


def _design_alpha() -> float:
    """The fixed-n level whose critical value is c: ratings_needed then plans for c·SE."""
    return 2 * (1 - NormalDist().cdf(sequential.critical_value()))


def _spreads(sample: "JudgeSample", path: RatioPath | None) -> tuple[float, float, bool]:
    """Today's spread per rated pair, prediction-powered and classical, and whether it had to
    be assumed (fewer than 3 counted pairs, or none kept)."""
    finite = np.flatnonzero(np.isfinite(path.std_error)) if path is not None else np.array([])
    if path is None or finite.size == 0:
        widest = (sample.ends[1] - sample.ends[0]) / 2
        return widest, widest, True
    index = int(finite[-1])
    n, pool = index + 1, sample.judged
    fpc = 1.0 - n / pool
    if fpc <= 0:
        return 0.0, 0.0, False
    scale = math.sqrt(n / fpc)
    return (
        float(path.std_error[index]) * scale,
        float(path.classical_std_error[index]) * scale,
        False,
    )


def _needed(spread: float, half_width: float, pool: int) -> int:
    if pool < 2:
        return pool
    return ratings_needed(spread, half_width, pool=pool, alpha=_design_alpha())


def _counts(
    sample: "JudgeSample", path: RatioPath | None, half_width: float, least: int
) -> dict[str, Any]:
    """The rated pairs for a final ± `half_width` (at least `least`), classical and
    prediction-powered, and how many more that is than today's."""
    powered, classical, assumed = _spreads(sample, path)
    needed_classical = max(_needed(classical, half_width, sample.judged), least)
    needed_powered = max(_needed(powered, half_width, sample.judged), least)
    return {
        "needed_classical": needed_classical,
        "needed_powered": needed_powered,
        "more_classical": max(needed_classical - sample.rated, 0),
        "more_powered": max(needed_powered - sample.rated, 0),
        "spread_assumed": assumed,
    }


def judge_plan(
    sample: "JudgeSample", path: RatioPath | None, half_width: float, least: int
) -> dict[str, Any]:
    """How many rated pairs make the judge's figure final at ± `half_width`, classical and
    prediction-powered (never fewer than `least`, the first interval), and how many more that
    is than today's. A judged pool smaller than `least` never gets an interval: no plan."""
    if half_width <= 0 or sample.judged < least:
        return {"needed_classical": None, "needed_powered": None, "pool_too_small": True}
    return _counts(sample, path, half_width, least)


def closest_plan(
    sample: "JudgeSample", path: RatioPath | None, gap: float | None, target: float
) -> dict[str, Any]:
    """The rated pairs that tell the two closest judges apart with 80 % power at today's gap,
    and the finer target that would be needed when the project's cannot (the module's
    docstring)."""
    if gap is None or gap == 0 or sample.judged == 0:
        return {"needed_powered": None, "more_powered": None, "power": POWER}
    aim = sequential.critical_value() * abs(gap) / (sequential.critical_value() + Z_POWER)
    return {
        **_counts(sample, path, aim, 0),
        "power": POWER,
        "needs_target": aim if aim < target else None,
    }
