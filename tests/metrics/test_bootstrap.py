"""metrics.bootstrap: percentile bootstrap intervals, against hand-worked distributions."""

import statistics

import numpy as np
import pytest

from metrics.bootstrap import (
    bootstrap_interval,
    bootstrap_mean_interval,
    bootstrap_ratio_interval,
    percentile_interval,
    resample_indices,
)


def mean(units):
    return sum(units) / len(units)


CONTINUOUS = [float(v) for v in np.random.default_rng(7).normal(10.0, 2.0, 200)]


def test_percentile_interval_by_hand():
    # 0..100: the 5th and 95th percentiles of 101 evenly spaced values are 5 and 95.
    assert percentile_interval(list(range(101)), 0.90) == pytest.approx((5.0, 95.0))
    # Non-finite values are dropped: only [1, 3] remain, the 50 % interval of [1, 3] is
    # percentiles 25 and 75 -> 1 + 0.25 * 2 = 1.5 and 1 + 0.75 * 2 = 2.5.
    assert percentile_interval([1.0, float("nan"), 3.0, float("inf")], 0.5) == (1.5, 2.5)
    assert percentile_interval([], 0.95) is None


def test_resample_indices_shape_range_and_blocks():
    blocks = list(resample_indices(1_000_000, 5, seed=0))
    # 2_000_000 cells per block at most -> 2 rows per block: 2 + 2 + 1 rows.
    assert [b.shape for b in blocks] == [(2, 1_000_000), (2, 1_000_000), (1, 1_000_000)]
    small = np.concatenate(list(resample_indices(3, 50, seed=1)))
    assert small.shape == (50, 3) and small.min() >= 0 and small.max() <= 2


def test_two_units_zero_one_by_hand():
    # Resampled means of [0, 1] are 0 (p = 1/4), 0.5 (1/2) and 1 (1/4). With ~250 of 1000
    # resamples at each end (far above the 25 needed), the 2.5th percentile is 0, the 97.5th 1.
    assert bootstrap_interval([0, 1], mean) == (0.0, 1.0)
    assert bootstrap_mean_interval([0, 1]) == (0.0, 1.0)
    # A 40 % interval is percentiles 30 and 70: both fall in the middle half, at 0.5.
    assert bootstrap_interval([0, 1], mean, level=0.4) == (0.5, 0.5)


def test_constant_units_give_a_point_interval():
    assert bootstrap_interval([3, 3, 3], mean) == (3.0, 3.0)


def test_statistic_returning_none_is_skipped():
    # Only resamples without the 0 are defined: they are [1, 1] with mean 1 -> (1, 1).
    def mean_without_zero(units):
        return None if 0 in units else mean(units)

    assert bootstrap_interval([0, 1], mean_without_zero) == (1.0, 1.0)
    # A statistic that is never defined (or only NaN) gives no interval.
    assert bootstrap_interval([0, 1], lambda units: None) is None
    assert bootstrap_interval([0, 1], lambda units: float("nan")) is None


def test_fewer_than_two_units_is_none():
    assert bootstrap_interval([], mean) is None
    assert bootstrap_interval([5], mean) is None
    assert bootstrap_mean_interval([5.0]) is None
    assert bootstrap_ratio_interval([1], [2]) is None


def test_units_are_passed_whole():
    # Tuple and list units must not be flattened by numpy: each resample is 3 pairs.
    units = [(1, 2), (3, 4), (5, 6)]
    assert bootstrap_interval(units, lambda s: float(len(s)), resamples=10) == (3.0, 3.0)
    lists = [[1, 2], [3, 4]]
    assert bootstrap_interval(lists, lambda s: float(sum(len(u) for u in s))) == (4.0, 4.0)


def test_reproducible_for_a_seed_and_seed_matters():
    first = bootstrap_interval(CONTINUOUS, mean, seed=3)
    assert first == bootstrap_interval(CONTINUOUS, mean, seed=3)
    assert first != bootstrap_interval(CONTINUOUS, mean, seed=4)
    assert bootstrap_mean_interval(CONTINUOUS, seed=3) == bootstrap_mean_interval(
        CONTINUOUS, seed=3
    )


def test_interval_contains_the_estimate_and_narrows_with_level():
    low, high = bootstrap_mean_interval(CONTINUOUS)
    assert low < statistics.fmean(CONTINUOUS) < high
    # Standard error ~ 2 / sqrt(200) = 0.14: the 95 % interval is ~ +-0.28 wide each side.
    assert 0.15 < high - low < 0.9
    narrow_low, narrow_high = bootstrap_mean_interval(CONTINUOUS, level=0.5)
    assert low < narrow_low < narrow_high < high


def test_mean_interval_uses_the_same_resamples_as_the_generic_one():
    generic = bootstrap_interval(CONTINUOUS, mean, seed=11, resamples=300)
    vectorised = bootstrap_mean_interval(CONTINUOUS, seed=11, resamples=300)
    assert vectorised == pytest.approx(generic, abs=1e-12)


def test_ratio_interval_matches_mean_for_unit_denominators():
    flags = [1, 0, 1, 1, 0, 1, 1, 0]
    assert bootstrap_ratio_interval(flags, [1] * len(flags), seed=2) == pytest.approx(
        bootstrap_mean_interval(flags, seed=2), abs=1e-12
    )


def test_ratio_interval_skips_zero_denominators():
    # Units (1 / 2) and (0 / 0): a resample of the second twice has denominator 0 (skipped);
    # every other resample is k * 1 / (k * 2) = 0.5.
    assert bootstrap_ratio_interval([1, 0], [2, 0]) == (0.5, 0.5)
    with pytest.raises(ValueError):
        bootstrap_ratio_interval([1, 2], [1])


def test_invalid_arguments_raise():
    with pytest.raises(ValueError):
        bootstrap_interval([1, 2], mean, level=1.0)
    with pytest.raises(ValueError):
        bootstrap_mean_interval([1, 2], resamples=0)
