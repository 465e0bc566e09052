"""Prediction-powered estimates of a mean, with normal (z) intervals.

Y_i is the quantity of interest on a rated item (an expert-labelled pair), f_i a prediction of
it available on every item; z = the standard normal quantile at 1 - alpha/2; n = number of
rated items. Every estimator is unbiased whatever the quality of f (the randomness of which
items were rated carries the guarantee); a good f only narrows the interval.

classical_mean(y, pool=M)
    mean(y) +- z * sd(y) / sqrt(n) * sqrt(1 - n/M), sd with ddof=1; without `pool` no
    finite-population correction. Assumes y is an i.i.d. sample (or, with `pool`, a simple
    random sample without replacement of the pool's M items).

ppi_mean(y, f_rated, f_unrated)  -- PPI++ [ADZ23], superpopulation, N = len(f_unrated)
    estimate = lam * mean(f_unrated) + mean(y - lam * f_rated)
    std_error^2 = lam^2 * var0(f_unrated) / N + var0(y - lam * f_rated) / n   (ddof=0)
    lam (power tuning, when not given) = cov0(y, f_rated) / ((1 + n/N) * var1(f_all)),
    clipped to [0, 1], where f_all = f_rated and f_unrated together (ddof=1) and cov0 has
    ddof=0: exactly the choices of ppi_py.ppi_mean_ci / ppi_mean_pointestimate (0.2.3).
    lam = 1 is plain PPI [AB+23], lam = 0 the classical estimate. Assumes the rated and the
    unrated items are independent draws from one distribution.

pool_mean(y, f_rated, f_pool)  -- PPI++ for a fixed, finite pool of M = len(f_pool) items
    (the rated items are among them), the rated ones a simple random sample without
    replacement of the pool. mean(f_pool) is then known exactly, so the only noise is the
    sampled rectifier:
    estimate = lam * mean(f_pool) + mean(y - lam * f_rated)
    std_error^2 = (1 - n/M) * var1(y - lam * f_rated) / n
    lam (when not given) = cov1(y, f_rated) / var1(f_rated), the minimiser of that variance,
    clipped to [0, 1] (0 when f_rated is constant). lam = 0 is classical_mean(y, pool=M).

active_mean(y, f_rated, pi_rated, f_pool)  -- active inference [ZC24], Poisson sampling:
    pool item i was rated independently with known probability pi_i in (0, 1]. With the
    predictor g_i = lam * f_i + c,
    estimate = mean_pool(g) + (1/M) * sum_rated (y_i - g_i) / pi_i
    (Horvitz-Thompson on the residual; unbiased for any fixed lam and c), and
    std_error^2 = (1/M^2) * sum_rated (1 - pi_i) * (y_i - g_i)^2 / pi_i^2
    (the unbiased estimate of the Horvitz-Thompson variance under Poisson sampling), times
    n / (n - 2) for the two parameters fitted on those residuals.
    lam and c minimise that variance estimate: a weighted least squares fit of y on f_rated
    with weights (1 - pi_i) / pi_i^2 (ordinary least squares when every weight is 0, i.e. every
    rated pi_i is 1; with the whole pool rated the estimate is then mean(y), std_error 0).
    The interval is a normal approximation to a weighted sum: it needs the weights spread
    over many rated items. When a few items of tiny pi carry them (Kish effective size
    (sum w)^2 / sum w^2 of about 20), it under-covers: about 91.5% for a nominal 95% with pi
    from 0.02 to 0.3 on a pool of 2000 (n about 270), 94% with pi from 0.05.

Like PPI++ and active inference themselves, lam (and c) are fitted on the same rated items
they serve: the plug-in adds a bias of order 1/n, negligible against the O(1/sqrt(n)) interval.

ratings_needed(residual_sd, half_width, pool=M) inverts the interval's half-width:
the smallest n with z * residual_sd / sqrt(n) * sqrt(1 - n/M) <= half_width.

A paired difference (judge a minus judge b on the same items) needs no function of its own:
pass y_a - y_b and f_a - f_b to the same estimators.

References:
[ADZ23] A. N. Angelopoulos, J. C. Duchi, T. Zrnic. PPI++: Efficient Prediction-Powered
    Inference. arXiv:2311.01453, 2023. Reference code: ppi_py (PyPI `ppi-python`).
[AB+23] A. N. Angelopoulos, S. Bates, C. Fannjiang, M. I. Jordan, T. Zrnic.
    Prediction-powered inference. Science 382 (6671), 2023.
[ZC24] T. Zrnic, E. J. Candes. Active statistical inference. ICML 2024, arXiv:2403.03208.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np
import numpy.typing as npt

FloatArray = npt.NDArray[np.float64]
# Sequences or numpy arrays of any real dtype (bools and integers included).
Values = Sequence[float] | npt.NDArray[np.generic]


@dataclass(frozen=True)
class MeanEstimate:
    """A point estimate with its 1 - alpha interval [low, high] and standard error.

    `rated` is n, the labelled items used; `pool` is N unlabelled items (ppi_mean), the pool
    size M (classical_mean with a pool, pool_mean, active_mean), 0 for classical_mean without a
    pool; `lam` the power-tuning parameter used (0.0 for classical_mean)."""

    estimate: float
    low: float
    high: float
    std_error: float
    rated: int
    pool: int
    lam: float

    def as_dict(self) -> dict[str, float | int]:
        return {
            "estimate": self.estimate,
            "low": self.low,
            "high": self.high,
            "std_error": self.std_error,
            "rated": self.rated,
            "pool": self.pool,
            "lam": self.lam,
        }


def classical_mean(y: Values, *, pool: int | None = None, alpha: float = 0.05) -> MeanEstimate:
    """mean(y) with a z interval (sd ddof=1); with `pool`=M, y is a simple random sample
    without replacement of M items and the standard error carries sqrt(1 - n/M)."""
    labels = _vector(y, "y")
    n = _check_rated(labels)
    fpc = 1.0 if pool is None else _fpc(n, _check_pool(pool, n))
    std_error = float(labels.std(ddof=1)) / math.sqrt(n) * math.sqrt(fpc)
    return _estimate(float(labels.mean()), std_error, alpha, n, pool or 0, 0.0)


def ppi_mean(
    y: Values,
    f_rated: Values,
    f_unrated: Values,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
) -> MeanEstimate:
    """PPI++ mean (superpopulation) as ppi_py.ppi_mean_ci computes it; lam=None tunes it."""
    labels, rated = _rated_pair(y, f_rated)
    unrated = _vector(f_unrated, "f_unrated")
    if unrated.size == 0:
        raise ValueError("f_unrated is empty: ppi_mean needs unrated items")
    n, big_n = labels.size, unrated.size
    if lam is None:
        lam = _superpopulation_lam(labels, rated, unrated)
    rectifier = labels - lam * rated
    estimate = lam * float(unrated.mean()) + float(rectifier.mean())
    imputed_var = float((lam * unrated).var()) / big_n
    rectifier_var = float(rectifier.var()) / n
    return _estimate(estimate, math.sqrt(imputed_var + rectifier_var), alpha, n, big_n, lam)


def pool_mean(
    y: Values,
    f_rated: Values,
    f_pool: Values,
    *,
    alpha: float = 0.05,
    lam: float | None = None,
) -> MeanEstimate:
    """PPI++ mean of a fixed pool of M = len(f_pool) items (rated ones included), the rated
    items a simple random sample without replacement of it; lam=None tunes it."""
    labels, rated = _rated_pair(y, f_rated)
    pool = _vector(f_pool, "f_pool")
    n = labels.size
    big_m = _check_pool(pool.size, n)
    if lam is None:
        lam = _regression_slope(labels, rated)
    rectifier = labels - lam * rated
    estimate = lam * float(pool.mean()) + float(rectifier.mean())
    std_error = math.sqrt(_fpc(n, big_m) * float(rectifier.var(ddof=1)) / n)
    return _estimate(estimate, std_error, alpha, n, big_m, lam)


def active_mean(
    y: Values,
    f_rated: Values,
    pi_rated: Values,
    f_pool: Values,
    *,
    alpha: float = 0.05,
) -> MeanEstimate:
    """Active-inference mean of a pool of M = len(f_pool) items, each rated independently
    with known probability pi (Poisson sampling); predictor lam * f + c fitted by weighted
    least squares, residual corrected by inverse-probability weighting."""
    labels, rated = _rated_pair(y, f_rated)
    probabilities = _vector(pi_rated, "pi_rated")
    if probabilities.size != labels.size:
        raise ValueError(
            f"pi_rated has {probabilities.size} values but y has {labels.size}: one per rated item"
        )
    if not np.all((probabilities > 0.0) & (probabilities <= 1.0)):
        raise ValueError("every inclusion probability pi must lie in (0, 1]")
    pool = _vector(f_pool, "f_pool")
    n = labels.size
    big_m = _check_pool(pool.size, n)
    weights = (1.0 - probabilities) / probabilities**2
    lam, intercept = weighted_line(rated, labels, weights)
    residual = labels - (lam * rated + intercept)
    correction = float((residual / probabilities).sum()) / big_m
    estimate = lam * float(pool.mean()) + intercept + correction
    # Two parameters (lam, c) were fitted on these residuals: n / (n - 2) undoes the shrinkage
    # of their spread, as in a regression's residual variance (the replays of
    # bench/label_efficiency.py under-covered without it).
    fitted = n / (n - 2) if n > 2 else 1.0
    std_error = math.sqrt(fitted * float((weights * residual**2).sum())) / big_m
    return _estimate(estimate, std_error, alpha, n, big_m, lam)


def ratings_needed(
    residual_sd: float,
    half_width: float,
    *,
    pool: int | None = None,
    alpha: float = 0.05,
) -> int:
    """The smallest n (at least 2) with z * residual_sd / sqrt(n) * sqrt(1 - n/M) <= half_width
    (no correction without `pool`); `pool` itself when only rating every item gets there.

    residual_sd is sd(y) for the classical interval, sd(y - lam * f) for the powered one."""
    if not math.isfinite(residual_sd) or residual_sd < 0:
        raise ValueError("residual_sd must be a finite number >= 0")
    if not math.isfinite(half_width) or half_width <= 0:
        raise ValueError("half_width must be a finite number > 0")
    if pool is not None and pool < 2:
        raise ValueError("pool must hold at least 2 items")
    z = _z(alpha)

    def reaches(n: int) -> bool:
        fpc = 1.0 if pool is None else _fpc(n, pool)
        return z * residual_sd / math.sqrt(n) * math.sqrt(fpc) <= half_width

    unlimited = (z * residual_sd / half_width) ** 2
    guess = unlimited if pool is None else unlimited / (1.0 + unlimited / pool)
    n = max(2, math.ceil(guess))
    if pool is not None:
        n = min(n, pool)
    # The closed form can be one off in floating point: settle it on the criterion itself.
    while n > 2 and reaches(n - 1):
        n -= 1
    while not reaches(n) and (pool is None or n < pool):
        n += 1
    return n


def _superpopulation_lam(labels: FloatArray, rated: FloatArray, unrated: FloatArray) -> float:
    # ppi_py._calc_lam_glm for a mean: cov with ddof=0 over the rated items, var with ddof=1
    # over all predictions, the (1 + n/N) factor, clipped to [0, 1].
    n, big_n = labels.size, unrated.size
    spread = float(np.concatenate([rated, unrated]).var(ddof=1))
    if spread == 0.0:
        return 0.0  # constant predictions: any lam gives the classical estimate
    covariance = float(((labels - labels.mean()) * (rated - rated.mean())).mean())
    return _clip_unit(covariance / ((1.0 + n / big_n) * spread))


def _regression_slope(labels: FloatArray, rated: FloatArray) -> float:
    spread = float(rated.var(ddof=1))
    if spread == 0.0:
        return 0.0
    covariance = float(((labels - labels.mean()) * (rated - rated.mean())).sum()) / (rated.size - 1)
    return _clip_unit(covariance / spread)


def weighted_line(x: FloatArray, y: FloatArray, weights: FloatArray) -> tuple[float, float]:
    """Slope and intercept of the weighted least-squares line of y on x (ordinary least squares
    when every weight is 0); slope 0 when x does not vary where the weight lies."""
    if not np.any(weights > 0.0):
        weights = np.ones_like(weights)
    total = float(weights.sum())
    x_mean = float((weights * x).sum()) / total
    y_mean = float((weights * y).sum()) / total
    spread = float((weights * (x - x_mean) ** 2).sum())
    if spread <= 1e-12 * total:
        return 0.0, y_mean
    slope = float((weights * (x - x_mean) * (y - y_mean)).sum()) / spread
    return slope, y_mean - slope * x_mean


def _estimate(
    estimate: float, std_error: float, alpha: float, rated: int, pool: int, lam: float
) -> MeanEstimate:
    margin = _z(alpha) * std_error
    return MeanEstimate(
        estimate=estimate,
        low=estimate - margin,
        high=estimate + margin,
        std_error=std_error,
        rated=rated,
        pool=pool,
        lam=float(lam),
    )


def _z(alpha: float) -> float:
    if not 0.0 < alpha < 1.0:
        raise ValueError("alpha must lie strictly between 0 and 1")
    return NormalDist().inv_cdf(1.0 - alpha / 2.0)


def _vector(values: Values, name: str) -> FloatArray:
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {array.shape}")
    if not np.all(np.isfinite(array)):
        raise ValueError(f"{name} holds a value that is not a finite number")
    return array


def _rated_pair(y: Values, f_rated: Values) -> tuple[FloatArray, FloatArray]:
    labels, rated = _vector(y, "y"), _vector(f_rated, "f_rated")
    if labels.size != rated.size:
        raise ValueError(
            f"y has {labels.size} values but f_rated has {rated.size}: one per rated item"
        )
    _check_rated(labels)
    return labels, rated


def _check_rated(labels: FloatArray) -> int:
    if labels.size < 2:
        raise ValueError(f"an interval needs at least 2 rated items, got {labels.size}")
    return int(labels.size)


def _check_pool(pool: int, rated: int) -> int:
    if pool < rated:
        raise ValueError(f"the pool ({pool} items) is smaller than the rated sample ({rated})")
    return pool


def _fpc(n: int, pool: int) -> float:
    return 1.0 - n / pool


def _clip_unit(value: float) -> float:
    return min(max(value, 0.0), 1.0)
