"""The vectorised alpha agrees with the krippendorff package and bootstraps reproducibly."""

import numpy as np
import pytest

from metrics.agreement import krippendorff_alpha
from metrics.alpha_bootstrap import (
    alpha_from_coincidences,
    bootstrap_coincidences,
    interval_of,
    unit_coincidences,
)


def alpha_interval_fast(units, scale, level, *, resamples=1000, seed=0):
    """The interval the agreement page shows: one set of resamples, read at a level."""
    return interval_of(bootstrap_coincidences(units, scale, resamples=resamples, seed=seed), level)


def _random_units(seed, count=60, scale=7):
    rng = np.random.default_rng(seed)
    units = []
    for _ in range(count):
        base = rng.integers(1, scale + 1)
        size = rng.integers(1, 5)  # some units have a single value: not pairable
        units.append([int(np.clip(base + rng.integers(-2, 3), 1, scale)) for _ in range(size)])
    return units


@pytest.mark.parametrize("level", ["ordinal", "interval"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_from_coincidences_equals_the_package(level, seed):
    units = _random_units(seed)
    fast = alpha_from_coincidences(unit_coincidences(units, 7).sum(axis=0)[None], level)[0]
    assert fast == pytest.approx(krippendorff_alpha(units, 7, level), abs=1e-9)


def test_perfect_agreement_is_one_and_one_value_everywhere_is_undefined():
    assert alpha_from_coincidences(
        unit_coincidences([[1, 1], [5, 5, 5], [3, 3]], 7).sum(axis=0)[None], "interval"
    )[0] == pytest.approx(1.0)
    same = unit_coincidences([[4, 4], [4, 4]], 7).sum(axis=0)[None]
    assert np.isnan(alpha_from_coincidences(same, "ordinal")[0])


def test_the_interval_is_reproducible_and_holds_the_estimate():
    units = _random_units(7, count=200)
    first = alpha_interval_fast(units, 7, "ordinal", resamples=500, seed=3)
    again = alpha_interval_fast(units, 7, "ordinal", resamples=500, seed=3)
    other = alpha_interval_fast(units, 7, "ordinal", resamples=500, seed=4)
    estimate = krippendorff_alpha(units, 7, "ordinal")
    assert first == again and first != other
    assert first[0] < estimate < first[1]


def test_too_few_units_have_no_interval():
    assert alpha_interval_fast([[1, 2]], 7, "interval") is None
    assert alpha_interval_fast([[1], [2]], 7, "interval") is None


# ------------------------------------------- rules of the interval (undefined, unpairable, exact)

RAGGED = [[6, 7, 6], [1, 2, 2], [3, 4, 5], [6, 6], [2, 3], [5, 5, 4], [1, 1], [7, 5]]


def test_alpha_interval_perfect_agreement_by_hand():
    # Every resample of [[1, 1], [7, 7]] has alpha 1, except [[1, 1], [1, 1]] and
    # [[7, 7], [7, 7]] (a single value: alpha undefined, skipped) -> (1, 1).
    assert alpha_interval_fast([[1, 1], [7, 7]], 7, "interval") == pytest.approx((1.0, 1.0))


def test_alpha_interval_undefined_cases_are_none():
    assert alpha_interval_fast([[3, 3], [3, 3]], 7, "ordinal") is None  # one value everywhere
    assert alpha_interval_fast([[3, 4]], 7, "ordinal") is None  # one pairable unit
    assert alpha_interval_fast([[3], [4], [5]], 7, "ordinal") is None  # nothing pairable


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_interval_contains_the_estimate_and_is_reproducible(level):
    estimate = krippendorff_alpha(RAGGED, 7, level)
    interval = alpha_interval_fast(RAGGED, 7, level, seed=5)
    assert interval == alpha_interval_fast(RAGGED, 7, level, seed=5)
    low, high = interval
    assert low <= estimate <= high
    assert low < high and high <= 1.0


def test_alpha_interval_ignores_unpairable_units():
    # A unit with a single score does not enter alpha, so it must not enter the resampling.
    assert alpha_interval_fast(RAGGED + [[4], [2]], 7, "ordinal", seed=1) == alpha_interval_fast(
        RAGGED, 7, "ordinal", seed=1
    )
