"""Krippendorff's alpha from coincidence matrices, vectorised for the bootstrap.

Each unit (pair) contributes a K×K coincidence matrix; a bootstrap resample is a weighted sum
of those, so a thousand resamples cost one matrix product instead of a thousand calls of the
`krippendorff` package (which the point estimate in metrics.agreement still uses; a test
checks that both agree).

    O[c,k] = Σ_u (n_uc·n_uk − [c=k]·n_uc) / (m_u − 1)      (units with m_u ≥ 2 values)
    α = 1 − (n − 1) · Σ O[c,k]·δ²(c,k) / Σ n_c·n_k·δ²(c,k)
"""

from collections.abc import Sequence

import numpy as np
import numpy.typing as npt

from metrics.agreement import AlphaLevel
from metrics.bootstrap import Interval, percentile_interval

Matrices = npt.NDArray[np.float64]


def unit_coincidences(units: Sequence[Sequence[int]], scale: int) -> Matrices:
    """(units with at least two values) × K × K coincidence contributions."""
    rows = []
    for values in units:
        if len(values) < 2:
            continue
        counts = np.bincount(np.asarray(values) - 1, minlength=scale).astype(float)
        rows.append((np.outer(counts, counts) - np.diag(counts)) / (len(values) - 1))
    return np.array(rows).reshape(len(rows), scale, scale)


def _delta_squared(marginals: Matrices, level: AlphaLevel) -> Matrices:
    """(B × K × K) squared distances; the ordinal metric depends on the marginals."""
    batch, scale = marginals.shape
    values = np.arange(scale)
    if level == "interval":
        delta = (values[:, None] - values[None, :]).astype(float) ** 2
        return np.broadcast_to(delta, (batch, scale, scale))
    if level != "ordinal":
        raise ValueError(f"unknown level {level!r}")
    cumulative = np.concatenate([np.zeros((batch, 1)), np.cumsum(marginals, axis=1)], axis=1)
    low = np.minimum(values[:, None], values[None, :])
    high = np.maximum(values[:, None], values[None, :])
    # Σ_{g=low}^{high} n_g − (n_low + n_high) / 2
    between: Matrices = cumulative[:, high + 1] - cumulative[:, low]
    ends = (marginals[:, low] + marginals[:, high]) / 2
    return (between - ends) ** 2


def alpha_from_coincidences(coincidences: Matrices, level: AlphaLevel) -> Matrices:
    """Alpha of each (B × K × K) coincidence matrix; NaN where it is undefined."""
    marginals = coincidences.sum(axis=2)
    total = marginals.sum(axis=1)
    delta = _delta_squared(marginals, level)
    observed = (coincidences * delta).sum(axis=(1, 2))
    expected = (marginals[:, :, None] * marginals[:, None, :] * delta).sum(axis=(1, 2))
    with np.errstate(divide="ignore", invalid="ignore"):
        alpha = 1 - (total - 1) * observed / expected
    return np.where(expected > 0, alpha, np.nan)


def bootstrap_coincidences(
    units: Sequence[Sequence[int]], scale: int, *, resamples: int = 1000, seed: int = 0
) -> Matrices | None:
    """(resamples × K × K) coincidence matrices of bootstrap resamples of the units; None with
    fewer than two pairable units. Compute once, then read alpha at every level from it."""
    per_unit = unit_coincidences(units, scale)
    count = len(per_unit)
    if count < 2:
        return None
    rng = np.random.Generator(np.random.PCG64(seed))
    picks = rng.integers(0, count, size=(resamples, count))
    flat = (np.arange(resamples)[:, None] * count + picks).ravel()
    weights = np.bincount(flat, minlength=resamples * count).reshape(resamples, count)
    return (weights @ per_unit.reshape(count, -1)).reshape(resamples, scale, scale)


def interval_of(
    sampled: Matrices | None, level: AlphaLevel, confidence: float = 0.95
) -> Interval | None:
    """Percentile interval of alpha over bootstrap coincidence matrices."""
    if sampled is None:
        return None
    alphas = alpha_from_coincidences(sampled, level)
    return percentile_interval(alphas[~np.isnan(alphas)], confidence)
