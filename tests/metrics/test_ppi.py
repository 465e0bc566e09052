"""metrics.ppi: PPI++ against the authors' reference (ppi_py), and the finite-pool and active
estimators and the planner against their stated formulas and by coverage simulations."""

import math
from statistics import NormalDist

import numpy as np
import pytest

from metrics.ppi import (
    MeanEstimate,
    active_mean,
    classical_mean,
    pool_mean,
    ppi_mean,
    ratings_needed,
)
from tests import references

Z95 = NormalDist().inv_cdf(0.975)


@pytest.fixture
def ppi_py():
    return references.ppi_py()


def judged_items(rng, size, noise=0.15, accuracy=0.7, concentration=2.0):
    """Binary correctness y ~ Bernoulli(p) and a noisy prediction f of p, clipped to [0, 1];
    p ~ Beta with mean `accuracy`, the closer to 0 or 1 the smaller `concentration`."""
    p = rng.beta(accuracy * concentration, (1.0 - accuracy) * concentration, size)
    y = (rng.random(size) < p).astype(float)
    f = np.clip(p + rng.normal(0.0, noise, size), 0.0, 1.0)
    return y, f


def assert_matches_reference(ppi_py, y, f, f_unrated, alpha, lam):
    ours = ppi_mean(y, f, f_unrated, alpha=alpha, lam=lam)
    low, high = ppi_py.ppi_mean_ci(y, f, f_unrated, alpha=alpha, lam=lam)
    point = ppi_py.ppi_mean_pointestimate(y, f, f_unrated, lam=lam)
    assert abs(ours.estimate - float(np.squeeze(point))) <= 1e-9
    assert abs(ours.low - float(np.squeeze(low))) <= 1e-9
    assert abs(ours.high - float(np.squeeze(high))) <= 1e-9
    assert (ours.rated, ours.pool) == (len(y), len(f_unrated))


@pytest.mark.parametrize("seed", [0, 1, 2, 3, 4])
@pytest.mark.parametrize("lam", [None, 1.0])
@pytest.mark.parametrize("alpha", [0.05, 0.1])
def test_ppi_mean_equals_ppi_py(ppi_py, seed, lam, alpha):
    rng = np.random.default_rng(seed)
    n, big_n = [(50, 500), (200, 2000), (120, 80), (400, 10_000), (30, 30)][seed]
    y, f = judged_items(rng, n, noise=0.05 + 0.1 * seed)
    _, f_unrated = judged_items(rng, big_n, noise=0.05 + 0.1 * seed)
    assert_matches_reference(ppi_py, y, f, f_unrated, alpha, lam)


@pytest.mark.parametrize("seed", [10, 11, 12])
@pytest.mark.parametrize("lam", [None, 1.0])
def test_ppi_mean_of_a_paired_difference_equals_ppi_py(ppi_py, seed, lam):
    rng = np.random.default_rng(seed)
    y_a, f_a = judged_items(rng, 300, accuracy=0.75)
    y_b, f_b = judged_items(rng, 300, accuracy=0.6)
    _, fu_a = judged_items(rng, 3000, accuracy=0.75)
    _, fu_b = judged_items(rng, 3000, accuracy=0.6)
    assert_matches_reference(ppi_py, y_a - y_b, f_a - f_b, fu_a - fu_b, 0.05, lam)


def test_ppi_mean_power_tuning_uses_the_reference_lambda(ppi_py):
    rng = np.random.default_rng(5)
    y, f = judged_items(rng, 150, noise=0.3)
    _, f_unrated = judged_items(rng, 600, noise=0.3)
    tuned = ppi_mean(y, f, f_unrated)
    # Given back the lambda it chose, the reference reproduces the same interval.
    assert 0.0 < tuned.lam < 1.0
    assert_matches_reference(ppi_py, y, f, f_unrated, 0.05, tuned.lam)


def test_ppi_mean_with_constant_predictions_is_the_classical_interval():
    y = np.array([1.0, 0.0, 1.0, 1.0, 0.0, 1.0])
    estimate = ppi_mean(y, np.full(6, 0.5), np.full(20, 0.5))
    assert estimate.lam == 0.0
    assert estimate.estimate == pytest.approx(y.mean())
    # ppi_py's variance has ddof=0.
    assert estimate.std_error == pytest.approx(y.std() / math.sqrt(6))


def test_classical_mean_by_hand():
    y = [1.0, 0.0, 1.0, 1.0]
    # mean 0.75, sd (ddof=1) = 0.5, se = 0.25; with a pool of 8, times sqrt(1 - 4/8).
    plain = classical_mean(y)
    assert (plain.estimate, plain.std_error, plain.pool, plain.lam) == (0.75, 0.25, 0, 0.0)
    assert plain.low == pytest.approx(0.75 - Z95 * 0.25)
    pooled = classical_mean(y, pool=8)
    assert pooled.std_error == pytest.approx(0.25 * math.sqrt(0.5))
    assert pooled.pool == 8
    assert classical_mean(y, pool=4).std_error == 0.0  # the whole pool is rated


def test_pool_mean_with_lambda_zero_is_classical_mean_on_the_pool():
    rng = np.random.default_rng(20)
    _, f_pool = judged_items(rng, 500)
    y_pool, _ = judged_items(rng, 500)
    rated = rng.choice(500, 80, replace=False)
    for alpha in (0.05, 0.2):
        powered = pool_mean(y_pool[rated], f_pool[rated], f_pool, lam=0.0, alpha=alpha)
        classical = classical_mean(y_pool[rated], pool=500, alpha=alpha)
        assert powered.as_dict() == pytest.approx(classical.as_dict())


def test_pool_mean_by_formula_and_tuned_lambda():
    rng = np.random.default_rng(21)
    y_pool, f_pool = judged_items(rng, 1000, noise=0.4)
    rated = rng.choice(1000, 100, replace=False)
    y, f = y_pool[rated], f_pool[rated]
    estimate = pool_mean(y, f, f_pool)
    lam = np.cov(y, f)[0, 1] / f.var(ddof=1)
    assert 0.0 < lam < 1.0 and estimate.lam == pytest.approx(lam)
    assert estimate.estimate == pytest.approx(lam * f_pool.mean() + (y - lam * f).mean())
    se = math.sqrt(0.9 * (y - lam * f).var(ddof=1) / 100)
    assert estimate.std_error == pytest.approx(se)
    assert (estimate.rated, estimate.pool) == (100, 1000)


def test_pool_mean_clips_lambda_and_survives_constant_predictions():
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0])
    anti = 1.0 - y  # perfectly anti-correlated: the raw slope is -1
    assert pool_mean(y, anti, np.concatenate([anti, anti])).lam == 0.0
    twice = 0.5 * y  # slope 2
    assert pool_mean(y, twice, np.concatenate([twice, twice])).lam == 1.0
    constant = pool_mean(y, np.full(5, 0.3), np.full(12, 0.3))
    assert constant.lam == 0.0 and constant.estimate == pytest.approx(0.6)


def test_pool_mean_is_narrower_than_classical_when_f_predicts_y():
    rng = np.random.default_rng(22)
    # p near 0 or 1: f, close to p, nearly tells y.
    y_pool, f_pool = judged_items(rng, 2000, noise=0.05, concentration=0.3)
    rated = rng.choice(2000, 200, replace=False)
    powered = pool_mean(y_pool[rated], f_pool[rated], f_pool)
    classical = classical_mean(y_pool[rated], pool=2000)
    assert powered.high - powered.low < 0.8 * (classical.high - classical.low)


def coverage(estimates, truth):
    return sum(e.low <= truth <= e.high for e in estimates) / len(estimates)


def test_pool_mean_covers_the_pool_mean_under_simple_random_sampling():
    rng = np.random.default_rng(23)
    y_pool, f_pool = judged_items(rng, 2000, noise=0.2)
    truth = y_pool.mean()
    estimates = []
    for _ in range(400):
        rated = rng.choice(2000, 200, replace=False)
        estimates.append(pool_mean(y_pool[rated], f_pool[rated], f_pool))
    assert 0.92 <= coverage(estimates, truth) <= 0.98
    mean_se = np.mean([e.std_error for e in estimates])
    assert abs(np.mean([e.estimate for e in estimates]) - truth) < 3 * mean_se / math.sqrt(400)


def poisson_draw(rng, y_pool, f_pool, pi_pool):
    rated = rng.random(len(y_pool)) < pi_pool
    return active_mean(y_pool[rated], f_pool[rated], pi_pool[rated], f_pool)


def test_active_mean_is_unbiased_and_covers_under_unequal_poisson_sampling():
    rng = np.random.default_rng(24)
    y_pool, f_pool = judged_items(rng, 2000, noise=0.2)
    # Uncertain items (f near 1/2) are rated more often, as an active policy would: about 300
    # of 2000 in expectation, with probabilities from 0.05 to 0.3. (With a floor of 0.02 the
    # few rarest items carry the weighted fit and the interval under-covers, about 0.915: the
    # limit stated in metrics/ppi.py.)
    pi_pool = 0.05 + 0.25 * (1.0 - np.abs(2.0 * f_pool - 1.0))
    truth = y_pool.mean()
    estimates = [poisson_draw(rng, y_pool, f_pool, pi_pool) for _ in range(400)]
    assert 0.92 <= coverage(estimates, truth) <= 0.98
    mean_se = np.mean([e.std_error for e in estimates])
    assert abs(np.mean([e.estimate for e in estimates]) - truth) < 3 * mean_se / math.sqrt(400)
    # The design is informative: the unweighted mean of the rated y is far off the truth.
    naive = np.mean([y_pool[rng.random(2000) < pi_pool].mean() for _ in range(50)])
    assert abs(naive - truth) > 10 * mean_se / math.sqrt(400)


def test_active_mean_by_formula_with_weighted_least_squares():
    rng = np.random.default_rng(25)
    y_pool, f_pool = judged_items(rng, 800)
    pi_pool = rng.uniform(0.1, 0.6, 800)
    rated = rng.random(800) < pi_pool
    y, f, pi = y_pool[rated], f_pool[rated], pi_pool[rated]
    estimate = active_mean(y, f, pi, f_pool)
    weights = (1 - pi) / pi**2
    lam, c = np.polyfit(f, y, 1, w=np.sqrt(weights))  # polyfit weighs residuals, not squares
    residual = y - (lam * f + c)
    assert estimate.lam == pytest.approx(lam)
    assert estimate.estimate == pytest.approx(
        (lam * f_pool + c).mean() + (residual / pi).sum() / 800
    )
    fitted = y.size / (y.size - 2)  # two parameters fitted on the residuals
    assert estimate.std_error == pytest.approx(
        math.sqrt(fitted * (weights * residual**2).sum()) / 800
    )
    # The fit minimises the variance estimate: plain Horvitz-Thompson (g = 0) is wider.
    plain_ht = math.sqrt((weights * y**2).sum()) / 800
    assert estimate.std_error < plain_ht
    assert (estimate.rated, estimate.pool) == (int(rated.sum()), 800)


def test_active_mean_with_every_item_rated_is_the_plain_mean():
    rng = np.random.default_rng(26)
    y, f = judged_items(rng, 50)
    estimate = active_mean(y, f, np.ones(50), f)
    assert estimate.estimate == pytest.approx(y.mean())
    assert estimate.std_error == 0.0 and estimate.low == estimate.high


def test_inputs_are_validated():
    with pytest.raises(ValueError, match="f_rated has 2"):
        ppi_mean([1.0, 0.0, 1.0], [0.5, 0.5], [0.5])
    with pytest.raises(ValueError, match="at least 2 rated items"):
        pool_mean([1.0], [0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="at least 2 rated items"):
        classical_mean([1.0])
    with pytest.raises(ValueError, match="smaller than the rated sample"):
        pool_mean([1.0, 0.0, 1.0], [0.5, 0.5, 0.5], [0.5, 0.5])
    with pytest.raises(ValueError, match="smaller than the rated sample"):
        classical_mean([1.0, 0.0, 1.0], pool=2)
    with pytest.raises(ValueError, match="unrated items"):
        ppi_mean([1.0, 0.0], [0.5, 0.5], [])
    with pytest.raises(ValueError, match="pi_rated has 1"):
        active_mean([1.0, 0.0], [0.5, 0.5], [0.5], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match=r"\(0, 1\]"):
        active_mean([1.0, 0.0], [0.5, 0.5], [0.5, 0.0], [0.5, 0.5, 0.5])
    with pytest.raises(ValueError, match="alpha"):
        classical_mean([1.0, 0.0], alpha=1.0)
    with pytest.raises(ValueError, match="finite"):
        classical_mean([1.0, float("nan")])


def half_width(n, sd, pool=None, z=Z95):
    fpc = 1.0 if pool is None else 1.0 - n / pool
    return z * sd / math.sqrt(n) * math.sqrt(fpc)


@pytest.mark.parametrize(
    ("sd", "target", "pool"),
    [(0.45, 0.05, None), (0.45, 0.05, 2000), (0.2, 0.03, 500), (0.5, 0.01, 3000), (0.3, 0.1, 50)],
)
def test_ratings_needed_is_the_smallest_n_that_reaches_the_width(sd, target, pool):
    n = ratings_needed(sd, target, pool=pool)
    assert n > 2 and (pool is None or n < pool)
    assert half_width(n, sd, pool) <= target < half_width(n - 1, sd, pool)


def test_ratings_needed_bounds_and_alpha():
    assert ratings_needed(0.5, 1e-6, pool=300) == 300  # only the whole pool gets there
    assert ratings_needed(0.0, 0.05) == 2 and ratings_needed(0.1, 10.0, pool=100) == 2
    z90 = NormalDist().inv_cdf(0.95)
    n = ratings_needed(0.4, 0.04, alpha=0.1)
    assert half_width(n, 0.4, z=z90) <= 0.04 < half_width(n - 1, 0.4, z=z90)
    with pytest.raises(ValueError):
        ratings_needed(0.4, 0.0)
    with pytest.raises(ValueError):
        ratings_needed(0.4, 0.05, pool=1)


def test_ratings_needed_agrees_with_the_interval_it_plans():
    rng = np.random.default_rng(27)
    y, _ = judged_items(rng, 120)
    achieved = classical_mean(y, pool=900)
    width = (achieved.high - achieved.low) / 2 * (1 + 1e-12)
    assert ratings_needed(float(y.std(ddof=1)), width, pool=900) == 120


def test_as_dict_lists_every_field():
    estimate = MeanEstimate(0.5, 0.4, 0.6, 0.05, rated=10, pool=20, lam=0.3)
    assert estimate.as_dict() == {
        "estimate": 0.5,
        "low": 0.4,
        "high": 0.6,
        "std_error": 0.05,
        "rated": 10,
        "pool": 20,
        "lam": 0.3,
    }
