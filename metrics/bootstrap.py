"""Percentile bootstrap intervals (docs/architecture.md §6.3: "95 % bootstrap intervals").

Units (pairs, ratings, games) are resampled with replacement from numpy's
Generator(PCG64(seed)), so an interval is reproducible for a given seed. Every function here
draws its resamples through `resample_indices`, so two functions given the same units and seed
see the same resamples. Intervals are None when undefined (fewer than 2 units, or no resample
on which the statistic is defined), never an exception.
"""

import math
from collections.abc import Callable, Iterator, Sequence
from typing import TypeVar

import numpy as np
import numpy.typing as npt

Interval = tuple[float, float]
_Unit = TypeVar("_Unit")

# Index matrices are drawn in blocks of at most this many cells, so memory stays bounded
# (about 16 MB of int64) whatever the number of units.
_MAX_CELLS = 2_000_000


def resample_indices(n: int, resamples: int, seed: int) -> Iterator[npt.NDArray[np.int64]]:
    """Yield blocks of resample index rows (shape (block, n), values in 0..n-1), `resamples`
    rows in all, drawn from Generator(PCG64(seed))."""
    rng = np.random.Generator(np.random.PCG64(seed))
    block = max(1, _MAX_CELLS // max(n, 1))
    done = 0
    while done < resamples:
        size = min(block, resamples - done)
        yield rng.integers(0, n, size=(size, n))
        done += size


def percentile_interval(values: Sequence[float] | np.ndarray, level: float) -> Interval | None:
    """The central `level` percentile interval of the finite `values`; None when there is none."""
    array = np.asarray(values, dtype=np.float64)
    array = array[np.isfinite(array)]
    if array.size == 0:
        return None
    tail = (1.0 - level) / 2.0 * 100.0
    low, high = np.percentile(array, [tail, 100.0 - tail])
    return float(low), float(high)


def _check(resamples: int, level: float) -> None:
    if resamples < 1:
        raise ValueError("resamples must be at least 1")
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")


def bootstrap_interval(
    units: Sequence[_Unit],
    statistic: Callable[[list[_Unit]], float | None],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of `statistic` over `units` resampled with replacement.

    `statistic` receives a list of units per resample; resamples on which it returns None (or a
    non-finite number) are skipped. None with fewer than 2 units or no defined resample.
    """
    _check(resamples, level)
    units = list(units)
    pool = np.empty(len(units), dtype=object)
    for i, unit in enumerate(units):  # one by one: list or tuple units must stay whole
        pool[i] = unit
    if pool.size < 2:
        return None
    values: list[float] = []
    for block in resample_indices(pool.size, resamples, seed):
        for row in block:
            value = statistic(pool[row].tolist())
            if value is not None and math.isfinite(value):
                values.append(float(value))
    return percentile_interval(values, level)


def bootstrap_mean_interval(
    values: Sequence[float], *, resamples: int = 1000, seed: int = 0, level: float = 0.95
) -> Interval | None:
    """Percentile bootstrap interval of the mean (a proportion when values are 0/1), vectorised.

    Same resamples as `bootstrap_interval(values, mean, ...)` with the same seed.
    """
    _check(resamples, level)
    array = np.asarray(values, dtype=np.float64)
    if array.size < 2:
        return None
    means = [array[block].mean(axis=1) for block in resample_indices(array.size, resamples, seed)]
    return percentile_interval(np.concatenate(means), level)


def bootstrap_ratio_interval(
    numerators: Sequence[float],
    denominators: Sequence[float],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of sum(numerators) / sum(denominators), resampling units
    (index i is one unit) with numpy in one shot. Why: a pooled accuracy over clustered trials
    (correct / evaluated per pair) must resample whole pairs, not trials. Resamples whose
    denominators sum to 0 are skipped."""
    _check(resamples, level)
    top = np.asarray(numerators, dtype=np.float64)
    bottom = np.asarray(denominators, dtype=np.float64)
    if top.shape != bottom.shape:
        raise ValueError("numerators and denominators differ in length")
    if top.size < 2:
        return None
    ratios = []
    for block in resample_indices(top.size, resamples, seed):
        sums_top, sums_bottom = top[block].sum(axis=1), bottom[block].sum(axis=1)
        defined = sums_bottom != 0
        ratios.append(sums_top[defined] / sums_bottom[defined])
    return percentile_interval(np.concatenate(ratios), level)
