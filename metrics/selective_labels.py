"""Selective labelling with a guaranteed agreement with the experts: on the pairs no expert will
rate, the judges label only the pairs on which their confidence reaches a threshold, chosen so
that, with probability at least 1 - delta over the rated pairs, the judges' label agrees with the
experts' label on at least 1 - alpha of the pairs they label.

References: Jung, Brahman, Choi (2025), "Trust or Escalate: LLM Judges with Provable Guarantees
for Human Agreement", ICLR 2025 (selective evaluation); Angelopoulos, Bates, Candès, Jordan, Lei
(2021), "Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control" (fixed-
sequence testing).

The calibration runs on the rated pairs. Candidate thresholds are the distinct confidence values
from the highest down; at each, the null hypothesis "agreement among the pairs with confidence
>= t is below 1 - alpha" is rejected when the one-sided Clopper–Pearson lower bound at level
delta reaches 1 - alpha. The walk goes down while hypotheses are rejected and stops at the first
failure (fixed-sequence testing: the error level stays delta over all thresholds without a
multiplicity correction, because the order is fixed before looking at the labels); the chosen
threshold is the last one rejected, which covers the most pairs. Thresholds that cover fewer than
`min_covered` rated pairs are not tested and do not stop the walk.

The guarantee assumes the rated pairs and the pairs to label are drawn from the same pool (the
rated pairs a simple random sample of it); it is about agreement with the experts' label, not
about the truth.
"""

import functools
import math
from collections.abc import Callable
from dataclasses import asdict, dataclass
from typing import Any

import numpy as np
import numpy.typing as npt

BISECTION_TOLERANCE = 1e-12


@dataclass(frozen=True)
class Calibration:
    threshold: float | None  # label a pair when its confidence >= threshold; None: label nothing
    alpha: float
    delta: float
    calibration_pairs: int  # rated pairs used
    covered: int  # rated pairs with confidence >= threshold (0 when threshold is None)
    coverage: float  # covered / calibration_pairs
    agreement: float | None  # empirical agreement among the covered rated pairs
    agreement_lower_bound: float | None  # Clopper–Pearson lower bound at the chosen threshold

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@functools.lru_cache(maxsize=8)
def _log_factorials(size: int) -> npt.NDArray[np.float64]:
    """log i! for i < size; cached by powers of two, so that a calibration's many tails share
    one table."""
    table = np.array([math.lgamma(i + 1) for i in range(size)])
    table.flags.writeable = False
    return table


def _log_upper_tail(successes: int, trials: int) -> Callable[[float], float]:
    """p -> log P(X >= successes) for X ~ Binomial(trials, p), 0 < p < 1, summed in log space
    (log-sum-exp) so that tails far below the smallest float keep their order. The terms that do
    not depend on p are computed once, for the bisection's forty calls."""
    log_factorials = _log_factorials(1 << trials.bit_length())  # more than trials entries
    counts = np.arange(successes, trials + 1, dtype=np.float64)
    others = trials - counts
    log_coefficients = (
        log_factorials[trials]
        - log_factorials[successes : trials + 1]
        - log_factorials[trials - successes :: -1]
    )

    def at(p: float) -> float:
        terms = log_coefficients + counts * math.log(p) + others * math.log1p(-p)
        largest = float(terms.max())
        return largest + math.log(float(np.exp(terms - largest).sum()))

    return at


def _check_binomial(successes: int, trials: int, delta: float) -> None:
    if not 0 <= successes <= trials:
        raise ValueError(f"need 0 <= successes <= trials, got {successes} of {trials}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def clopper_pearson_lower(successes: int, trials: int, delta: float) -> float:
    """One-sided exact lower confidence bound at confidence 1 - delta for a binomial proportion:
    the p at which P(X >= successes) = delta (0 when successes == 0). The tail rises with p, so
    bisection on p finds it; equal to scipy.stats.beta.ppf(delta, k, n - k + 1)."""
    _check_binomial(successes, trials, delta)
    if successes == 0:
        return 0.0
    log_delta = math.log(delta)
    log_tail = _log_upper_tail(successes, trials)
    low, high = 0.0, 1.0  # tail(low) <= delta < tail(high) throughout
    while high - low > BISECTION_TOLERANCE:
        middle = (low + high) / 2
        if log_tail(middle) <= log_delta:
            low = middle
        else:
            high = middle
    return low  # the bracket's lower end: the bound errs on the safe side


def _lower_bound_reaches(successes: int, trials: int, delta: float, target: float) -> bool:
    """clopper_pearson_lower(successes, trials, delta) >= target, from one tail instead of a
    bisection (the tail rises with p, so the bound reaches target exactly when the tail at target
    is at most delta); the calibration asks this at every candidate threshold."""
    if successes == 0:
        return target <= 0
    return _log_upper_tail(successes, trials)(target) <= math.log(delta)


def _check_calibration_inputs(
    confidence: npt.NDArray[np.float64], agrees: npt.NDArray[Any], alpha: float, delta: float
) -> None:
    if confidence.ndim != 1 or agrees.ndim != 1 or len(confidence) != len(agrees):
        raise ValueError(
            f"confidence and agrees must be flat and of equal length, "
            f"got {confidence.shape} and {agrees.shape}"
        )
    if np.isnan(confidence).any():
        raise ValueError("confidence has NaN values")
    if agrees.dtype != np.bool_ and not np.isin(agrees, (0, 1)).all():
        raise ValueError("agrees must hold booleans")
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def _candidates(
    confidence: npt.NDArray[np.float64], agrees: npt.NDArray[np.bool_]
) -> list[tuple[float, int, int]]:
    """(threshold, covered, agreeing) per distinct confidence value, highest first; a threshold
    covers every pair at or above it, ties included."""
    if len(confidence) == 0:
        return []
    order = np.argsort(-confidence, kind="stable")
    ranked = confidence[order]
    agreeing = np.cumsum(agrees[order])
    last_of_value = np.flatnonzero(np.append(ranked[1:] != ranked[:-1], True))
    return [(float(ranked[i]), int(i) + 1, int(agreeing[i])) for i in last_of_value]


def calibrate(
    confidence: npt.ArrayLike,
    agrees: npt.ArrayLike,
    *,
    alpha: float,
    delta: float,
    min_covered: int = 30,
) -> Calibration:
    """The lowest confidence threshold at which the judges' agreement with the experts is
    certified to be at least 1 - alpha at level delta, by fixed-sequence testing over the rated
    pairs (the module's docstring). `confidence`: per rated pair, the judges' confidence in their
    label (higher = surer); `agrees`: per rated pair, whether that label equals the experts'."""
    scores = np.asarray(confidence, dtype=np.float64)
    matches = np.asarray(agrees)
    _check_calibration_inputs(scores, matches, alpha, delta)
    chosen: tuple[float, int, int] | None = None
    for candidate in _candidates(scores, matches.astype(np.bool_)):
        _, covered, agreeing = candidate
        if covered < min_covered:
            continue
        if not _lower_bound_reaches(agreeing, covered, delta, 1 - alpha):
            break
        chosen = candidate
    pairs = len(scores)
    if chosen is None:
        return Calibration(None, alpha, delta, pairs, 0, 0.0, None, None)
    threshold, covered, agreeing = chosen
    return Calibration(
        threshold=threshold,
        alpha=alpha,
        delta=delta,
        calibration_pairs=pairs,
        covered=covered,
        coverage=covered / pairs,
        agreement=agreeing / covered,
        agreement_lower_bound=clopper_pearson_lower(agreeing, covered, delta),
    )


def confidence_from_votes(share_a: float) -> tuple[str, float]:
    """The judges' label on a pair and its confidence, from their soft vote: the share of judge
    trials choosing A among the trials answering A or B. An exact 0.5 is labelled A (confidence
    0.5, the lowest there is)."""
    if not 0 <= share_a <= 1:  # NaN fails too
        raise ValueError(f"share_a must be in [0, 1], got {share_a}")
    label = "A" if share_a >= 0.5 else "B"
    return label, max(share_a, 1 - share_a)
