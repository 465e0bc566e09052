"""A judge's accuracy on the pairs the experts keep, prediction-powered, with a variance floor
(docs/architecture.md §6.6).

The pool holds pairs the experts will drop once rated (ambiguous, a span); nobody knows which
before the rating. The estimand is therefore a ratio over the pool: θ = Σ K·Y / Σ K, with K = 1
on a pair the experts keep with a side, 0 on one they drop, and Y the judge's correctness (any
value on a dropped pair: K·Y is 0). θ solves mean_pool(K·(Y − θ)) = 0. On the rated pairs both
K and Y are known; f (a prediction of Y, on every pool pair) powers the estimate of that mean:

- uniform (a simple random sample of the pool, n of M): with λ the slope of K·(Y − θ₀) on f
  over the rated pairs (θ₀ the rated-only ratio, λ clipped to [0, 1]),
      θ̂ = θ₀ + λ·(mean_pool(f) − mean_rated(f)) / mean_rated(K),
  the exact root of the PPI++ estimate of the mean for that λ; standard error
  sqrt((1 − n/M)·s²(r)/n) / mean_rated(K), r = K·(Y − θ̂) − λf (the delta method). With
  nothing dropped it is metrics/ppi.py::pool_mean exactly. λ = 0 gives the classical ratio.
- a sample (pair i rated with probability π_i): g = λf + c fitted by weighted least squares
  of K·(Y − θ₀) on f (θ₀ the Hájek ratio), θ̂ = θ₀ + [mean_pool(g) − (1/M)Σ g/π] / D with
  D = (1/M)·Σ K/π, and the Horvitz–Thompson variance of r = K·(Y − θ̂) − g over D², times
  n/(n − 2), as in metrics/ppi.py::active_mean.

The variance floor: a judge right on every rated pair has s(r) = 0, a zero-width interval that
covers its true accuracy about half the time at 50 rated pairs. As the Agresti–Coull interval
does for a proportion, s²(r) is computed with z²/2 pseudo-pairs at each end of Y's range
(kept, f at its mean) beside the rated ones: they enter the spread only, never the estimate,
and their weight fades as 1/n. Where the estimate is monitored with a wider critical value b
(an interim look, metrics/sequential.py), the uniform path re-weighs them to b²/2
(`errors_with`), as the Wilson interval at level b would: the spread of a proportion falls
with its distance from 1/2, so an early run of right answers otherwise shows an interval
too narrow exactly when the estimate is too high.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import numpy.typing as npt

from metrics.ppi import Values, weighted_line

FloatArray = npt.NDArray[np.float64]
PSEUDO_WEIGHT = 1.959964**2 / 2  # z²/2 pseudo-pairs at each end (Agresti–Coull)


ErrorsWith = Callable[[FloatArray, bool], FloatArray]


@dataclass(frozen=True)
class RatioPath:
    """Per prefix of the rated pairs in the order they were drawn (index k − 1 for the first k):
    the prediction-powered and classical estimates and standard errors, and λ.
    `errors_with(weight, classical)`: the standard errors with `weight` pseudo-pairs at each
    end instead of z²/2 (one weight per prefix); None where the floor cannot be re-weighed
    (a sample)."""

    estimate: FloatArray
    std_error: FloatArray
    classical: FloatArray
    classical_std_error: FloatArray
    lam: FloatArray
    errors_with: ErrorsWith | None = None


def _arrays(*values: Values) -> list[FloatArray]:
    arrays = [np.asarray(v, dtype=np.float64) for v in values]
    if any(a.ndim != 1 or not np.all(np.isfinite(a)) for a in arrays):
        raise ValueError("inputs must be flat arrays of finite numbers")
    if len({a.size for a in arrays[:-1]}) > 1:
        raise ValueError("y, kept and f_rated need one value per rated pair")
    return arrays


def uniform_path(
    y: Values, kept: Values, f_rated: Values, f_pool: Values, *, ends: tuple[float, float]
) -> RatioPath:
    """The uniform estimator at every prefix of the rated pairs, in one vectorised pass:
    cumulative sums give each prefix's means, spreads and λ. `ends`: Y's range (the floor's
    pseudo-pairs). A prefix with no kept pair, or of one pair, has NaN figures."""
    labels, keeps, rated, pool = _arrays(y, kept, f_rated, f_pool)
    big_m = pool.size
    if labels.size > big_m:
        raise ValueError("more rated pairs than the pool holds")
    k = np.arange(1, labels.size + 1, dtype=np.float64)
    ky = keeps * labels

    def mean(values: FloatArray) -> FloatArray:
        return np.cumsum(values) / k

    m_ky, m_k, m_f = mean(ky), mean(keeps), mean(rated)
    m_kyky, m_kf, m_kyf, m_ff = mean(ky * ky), mean(keeps * rated), mean(ky * rated), mean(rated**2)
    with np.errstate(invalid="ignore", divide="ignore"):
        theta0 = m_ky / m_k
        # Moments with ddof 0; var(K) = m_k - m_k² as K² = K; cov(Ky, K) = m_ky - m_ky·m_k.
        var_ky, var_k, var_f = m_kyky - m_ky**2, m_k - m_k**2, m_ff - m_f**2
        cov_ky_k, cov_ky_f, cov_k_f = m_ky - m_ky * m_k, m_kyf - m_ky * m_f, m_kf - m_k * m_f
        slope = (cov_ky_f - theta0 * cov_k_f) / var_f
        lam = np.where(var_f > 1e-15, np.clip(np.nan_to_num(slope), 0.0, 1.0), 0.0)
        estimate = theta0 + lam * (float(pool.mean()) - m_f) / m_k

        def spread(theta: FloatArray, lam: FloatArray, weight: FloatArray) -> FloatArray:
            """The floored s² of r = K(Y − θ) − λf, from the moments (ddof 0 → 1 via k)."""
            var_r = (
                var_ky
                + theta**2 * var_k
                + lam**2 * var_f
                - 2 * theta * cov_ky_k
                - 2 * lam * cov_ky_f
                + 2 * theta * lam * cov_k_f
            )
            squares = np.maximum(var_r, 0.0) * k
            for end in ends:  # a kept pseudo-pair at f's mean: r - mean(r) = end - Ky + θ(K-1)
                squares = squares + weight * (end - m_ky - theta * (1.0 - m_k)) ** 2
            return squares / (k - 1.0 + len(ends) * weight)

        fpc = np.maximum(1.0 - k / big_m, 0.0)
        zero = np.zeros_like(k)
    unusable = (k < 2) | (m_k <= 0)
    nan = np.full_like(k, np.nan)

    def errors_with(weight: FloatArray, classical: bool) -> FloatArray:
        centre, slope = (theta0, zero) if classical else (estimate, lam)
        with np.errstate(invalid="ignore", divide="ignore"):
            errors = np.sqrt(fpc * spread(centre, slope, weight) / k) / m_k
        return np.where(unusable, nan, errors)

    standard = np.full_like(k, PSEUDO_WEIGHT)
    return RatioPath(
        estimate=np.where(unusable, nan, estimate),
        std_error=errors_with(standard, False),
        classical=np.where(unusable, nan, theta0),
        classical_std_error=errors_with(standard, True),
        lam=np.where(unusable, nan, lam),
        errors_with=errors_with,
    )


@dataclass(frozen=True)
class RatioEstimate:
    estimate: float
    std_error: float
    classical: float
    classical_std_error: float
    lam: float


def sample_estimate(
    y: Values,
    kept: Values,
    f_rated: Values,
    pi: Values,
    f_pool: Values,
    *,
    ends: tuple[float, float],
) -> RatioEstimate:
    """The estimator of a sample chosen for information (the module's docstring); the
    classical figure is the Hájek ratio with its Horvitz–Thompson error (λ = c = 0)."""
    labels, keeps, rated, probabilities, pool = _arrays(y, kept, f_rated, pi, f_pool)
    if probabilities.size != labels.size or not np.all((probabilities > 0) & (probabilities <= 1)):
        raise ValueError("pi needs one inclusion probability in (0, 1] per rated pair")
    n, big_m = labels.size, pool.size
    inverse = 1.0 / probabilities
    denominator = float((keeps * inverse).sum()) / big_m
    if n < 3 or denominator <= 0:
        raise ValueError("the estimate needs at least 3 rated pairs, one of them kept")
    theta0 = float((keeps * labels * inverse).sum() / (keeps * inverse).sum())
    weights = (1.0 - probabilities) / probabilities**2
    lam, intercept = weighted_line(rated, keeps * (labels - theta0), weights)
    correction = (
        float(pool.mean()) * lam
        + intercept
        - float(((lam * rated + intercept) * inverse).sum()) / big_m
    )
    estimate = theta0 + correction / denominator
    fitted = n / (n - 2)

    def std_error(theta: float, lam: float, intercept: float) -> float:
        residual = keeps * (labels - theta) - (lam * rated + intercept)
        squares = float((weights * residual**2).sum())
        mean_weight = float(weights.mean())
        centre = lam * float(rated.mean()) + intercept
        for end in ends:
            squares += PSEUDO_WEIGHT * mean_weight * (end - theta - centre) ** 2
        return float(np.sqrt(fitted * squares)) / big_m / denominator

    return RatioEstimate(
        estimate=estimate,
        std_error=std_error(estimate, lam, intercept),
        classical=theta0,
        classical_std_error=std_error(theta0, 0.0, 0.0),
        lam=lam,
    )
