"""Judge labels with a guarantee: on the pairs no expert has decided yet, the judges label only
those on which they are sure enough, down to a confidence threshold certified on the pairs the
experts did decide.

What is proven. The task's pool is the pairs in the experts' queue (rated, being rated or still
to rate). With probability at least 1 - delta over the random order in which the pool is rated
(every pair's uniform draw), at most floor(alpha * covered) of the `covered` pool pairs whose
confidence reaches the threshold would not get the judges' side from the experts, rated pairs
included: a pair the experts drop counts as a disagreement. The statement is about that finite
set of pairs, not about an abstract population, and the probability is over the draws alone: the
pool and the judges' votes are taken as they stand (importing pairs or running the judges again
makes a new calibration). It holds however often it is computed, because it is computed only at
checkpoints (below). Each export then knows how many of those pairs the
experts have decided since and how they went, so it can state, on the same event, a lower bound
on the agreement of the labels it gives (`labelled_agreement_at_least`).

How. The calibration pairs are the first n pairs of the pool in draw order, all decided: a simple
random sample of the pool, whatever order the experts decided them in (a pair that waits for
extra ratings is hard, so "the first n decided" would not be a random sample). Given how many of
them fall in a set of pool pairs, the disagreements among them are hypergeometric; the null
"more than floor(alpha * covered) of the covered pool pairs disagree" is rejected when
P(X <= observed) <= delta_j under its least favourable count. Candidate thresholds are the
pool's distinct confidence values from the highest down, tested in that fixed order, and the
walk stops at the first failure (fixed-sequence testing: the nulls are fixed by the pool, so the
error level stays delta_j over the whole walk). Where the walk starts matters: a threshold
covering few pairs fails on one disagreement and stops it, one covering many may already be too
low. So two walks run, each at delta_j / 2, one from the first threshold where the expected
number of calibration pairs could prove the bound at all (log(delta_j / 2) / log(1 - alpha):
no disagreement among them would), one from three times that many; the lower of the thresholds
they certify is taken (the union of their errors is at most delta_j). Which thresholds a walk
skips depends on the pool and the sample's size only, so each sequence is fixed in advance.

Checkpoints. The calibration happens at n = 100, 200, 400, ... pairs decided at the front of the
draw order, spending delta / 2^(j + 1) at the j-th, so that the chance that any checkpoint ever
certifies a wrong threshold is at most delta: a lead who exports after every rating gets the same
guarantee as one who exports once. Between checkpoints nothing moves.

References: Jung, Brahman, Choi (2025), "Trust or Escalate: LLM Judges with Provable Guarantees
for Human Agreement", ICLR 2025 (selective evaluation); Angelopoulos, Bates, Candès, Jordan, Lei
(2021), "Learn then Test: Calibrating Predictive Algorithms to Achieve Risk Control" (fixed-
sequence testing).
"""

import math
from dataclasses import asdict, dataclass, replace
from typing import Any

import numpy as np
import numpy.typing as npt

FIRST_CHECKPOINT = 100  # calibration pairs at the first checkpoint; each next one doubles


@dataclass(frozen=True)
class Walk:
    """The threshold a fixed-sequence walk certified, with the counts it rests on."""

    threshold: float
    covered: int  # pool pairs with confidence >= threshold
    calibration_covered: int  # calibration pairs among them
    calibration_agreeing: int  # ... whose judges' label the experts gave


@dataclass(frozen=True)
class Calibration:
    threshold: float | None  # label a pair when its confidence >= threshold; None: label nothing
    alpha: float
    delta: float  # the error level over every checkpoint together
    delta_spent: float | None  # this checkpoint's share of delta (None before the first)
    pool_pairs: int
    decided_in_draw_order: int  # pairs decided at the front of the draw order
    calibration_pairs: int  # this checkpoint: the first this many pairs by draw (0: none yet)
    next_checkpoint: int  # the calibration moves when this many lead the draw order decided
    covered: int  # pool pairs with confidence >= threshold (0 when threshold is None)
    coverage: float  # covered / pool_pairs
    disagreements_at_most: int | None  # among the covered pool pairs, with prob. >= 1 - delta
    calibration_covered: int
    calibration_agreement: float | None  # observed, among the covered calibration pairs

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def _log_choose(n: int, k: int) -> float:
    return math.lgamma(n + 1) - math.lgamma(k + 1) - math.lgamma(n - k + 1)


def hypergeometric_cdf(observed: int, population: int, marked: int, draws: int) -> float:
    """P(X <= observed) for X the marked items among `draws` items taken without replacement
    from `population` items of which `marked` are marked. The terms are built from the first
    one by their ratios, in log space, so that tails far below the smallest float keep their
    order and no factorial table is needed for a large pool."""
    if not 0 <= marked <= population or not 0 <= draws <= population:
        raise ValueError(f"need 0 <= marked, draws <= population, got {marked}, {draws}")
    low, high = max(0, draws - (population - marked)), min(draws, marked)
    if observed < low:
        return 0.0
    if observed >= high:
        return 1.0
    steps = np.arange(low, observed, dtype=np.float64)
    log_ratios = (
        np.log(marked - steps)
        + np.log(draws - steps)
        - np.log(steps + 1)
        - np.log(population - marked - draws + steps + 1)
    )
    log_first = (
        _log_choose(marked, low)
        + _log_choose(population - marked, draws - low)
        - _log_choose(population, draws)
    )
    log_terms = log_first + np.concatenate(([0.0], np.cumsum(log_ratios)))
    largest = float(log_terms.max())
    return min(1.0, math.exp(largest) * float(np.exp(log_terms - largest).sum()))


def _check_levels(alpha: float, delta: float) -> None:
    if not 0 < alpha < 1:
        raise ValueError(f"alpha must be in (0, 1), got {alpha}")
    if not 0 < delta < 1:
        raise ValueError(f"delta must be in (0, 1), got {delta}")


def _as_arrays(
    confidence: npt.ArrayLike, agrees: npt.ArrayLike
) -> tuple[npt.NDArray[np.float64], npt.NDArray[np.bool_]]:
    scores = np.asarray(confidence, dtype=np.float64)
    matches = np.asarray(agrees)
    if scores.ndim != 1 or matches.ndim != 1:
        raise ValueError("confidence and agrees must be flat")
    if np.isnan(scores).any():
        raise ValueError("confidence has NaN values")
    if matches.size and matches.dtype != np.bool_ and not np.isin(matches, (0, 1)).all():
        raise ValueError("agrees must hold booleans")
    return scores, matches.astype(np.bool_)


def fixed_sequence_threshold(
    confidence: npt.ArrayLike,
    agrees: npt.ArrayLike,
    *,
    pool: npt.ArrayLike,
    alpha: float,
    delta: float,
    min_covered: float,
) -> Walk | None:
    """The lowest confidence threshold one fixed-sequence walk certifies: with probability
    >= 1 - delta, at most floor(alpha * covered) of the pool pairs it covers disagree with the
    experts (the module's docstring). Thresholds where fewer than `min_covered` calibration
    pairs are expected are skipped. `confidence`, `agrees`: per calibration pair (a simple
    random sample of the pool), the judges' confidence and whether the experts gave their side;
    `pool`: the confidence of every pair of the pool, the calibration pairs included."""
    scores, matches = _as_arrays(confidence, agrees)
    everyone = np.asarray(pool, dtype=np.float64)
    _check_levels(alpha, delta)
    if len(scores) != len(matches):
        raise ValueError(f"{len(scores)} confidences for {len(matches)} agreements")
    if len(everyone) < len(scores) or np.isnan(everyone).any():
        raise ValueError("the pool must hold every calibration pair, without NaN")
    if len(scores) == 0:
        return None
    thresholds = np.unique(everyone)[::-1]
    ascending_pool = np.sort(everyone)
    covered = len(everyone) - np.searchsorted(ascending_pool, thresholds, side="left")
    order = np.argsort(scores, kind="stable")
    ascending, disagreeing = scores[order], np.cumsum(~matches[order][::-1])[::-1]
    first = np.searchsorted(ascending, thresholds, side="left")
    sampled = len(scores) - first
    missed = np.append(disagreeing, 0)[first]  # disagreements at or above each threshold
    # Which thresholds are tested depends on the pool and the sample's size only.
    tested = covered * len(scores) / len(everyone) >= min_covered
    chosen = None
    for index in np.flatnonzero(tested):
        pairs, sample, missing = int(covered[index]), int(sampled[index]), int(missed[index])
        least_false = math.floor(alpha * pairs) + 1  # the fewest disagreements making it false
        if hypergeometric_cdf(missing, pairs, least_false, sample) > delta:
            break
        chosen = Walk(float(thresholds[index]), pairs, sample, sample - missing)
    return chosen


def certify(
    confidence: npt.ArrayLike,
    agrees: npt.ArrayLike,
    *,
    pool: npt.ArrayLike,
    alpha: float,
    delta: float,
) -> Walk | None:
    """The lower threshold of two fixed-sequence walks at delta / 2 each, started where the
    bound could first be proven and at three times as many expected calibration pairs (the
    module's docstring); None when neither certifies one."""
    _check_levels(alpha, delta)
    start = math.log(delta / 2) / math.log(1 - alpha)
    walks = [
        fixed_sequence_threshold(
            confidence, agrees, pool=pool, alpha=alpha, delta=delta / 2, min_covered=factor * start
        )
        for factor in (1, 3)
    ]
    return min((walk for walk in walks if walk), key=lambda walk: walk.threshold, default=None)


def checkpoint(decided_in_draw_order: int) -> int:
    """The calibration pairs at the latest checkpoint reached (0 before the first)."""
    if decided_in_draw_order < FIRST_CHECKPOINT:
        return 0
    size = FIRST_CHECKPOINT
    while 2 * size <= decided_in_draw_order:
        size *= 2
    return size


def delta_at(size: int, delta: float) -> float:
    """The error level a checkpoint of `size` pairs spends: delta / 2^(j + 1) at the j-th, so
    that all of them together spend delta."""
    return delta * FIRST_CHECKPOINT / (2 * size)


def calibrate(
    confidence: npt.ArrayLike,
    agrees: npt.ArrayLike,
    *,
    alpha: float,
    delta: float,
) -> Calibration:
    """The threshold of the latest checkpoint. `confidence`: every pair of the pool, in the
    order of its uniform draw; `agrees`: for the pairs at the front of that order that the
    experts decided (so its length is how many lead the order decided), whether the experts
    gave the judges' side (a dropped pair: False)."""
    scores, matches = _as_arrays(confidence, agrees)
    _check_levels(alpha, delta)
    if len(matches) > len(scores):
        raise ValueError(f"{len(matches)} decided pairs in a pool of {len(scores)}")
    size = checkpoint(len(matches))
    walk = None
    if size:
        walk = certify(
            scores[:size], matches[:size], pool=scores, alpha=alpha, delta=delta_at(size, delta)
        )
    nothing = Calibration(
        threshold=None,
        alpha=alpha,
        delta=delta,
        delta_spent=delta_at(size, delta) if size else None,
        pool_pairs=len(scores),
        decided_in_draw_order=len(matches),
        calibration_pairs=size,
        next_checkpoint=2 * size if size else FIRST_CHECKPOINT,
        covered=0,
        coverage=0.0,
        disagreements_at_most=None,
        calibration_covered=0,
        calibration_agreement=None,
    )
    if walk is None:
        return nothing
    return replace(
        nothing,
        threshold=walk.threshold,
        covered=walk.covered,
        coverage=walk.covered / len(scores),
        disagreements_at_most=math.floor(alpha * walk.covered),
        calibration_covered=walk.calibration_covered,
        calibration_agreement=walk.calibration_agreeing / walk.calibration_covered,
    )


def labelled_agreement_at_least(
    calibration: Calibration, decided_disagreeing: int, labelled: int
) -> float | None:
    """On the calibration's event, the least share of `labelled` undecided covered pairs whose
    judges' label the experts would give: the covered pool pairs hold at most
    `disagreements_at_most` disagreements, `decided_disagreeing` of which the experts have
    already shown among the covered pairs they decided. None when there is nothing to state:
    no threshold, no label, or the decided pairs already contradict the calibration."""
    allowed = calibration.disagreements_at_most
    if allowed is None or labelled <= 0 or decided_disagreeing > allowed:
        return None
    return max(0.0, 1 - (allowed - decided_disagreeing) / labelled)


def judge_vote(a: int, b: int, answered: int) -> tuple[str | None, float]:
    """The judges' side on a pair and how sure they are, from their trials on it: `a` and `b`
    name a side, `answered` counts every trial that answered (ties and answers naming no side
    included). The confidence is the winning side's share shrunk towards 0 for few trials,
    (max(a, b) + 1) / (answered + 2): one A among 23 ties is 0.08, not 1.0. Equal votes name
    no side (confidence 0: never labelled)."""
    if min(a, b) < 0 or a + b > answered:
        raise ValueError(f"need 0 <= a, b and a + b <= answered, got {a}, {b}, {answered}")
    if a == b:
        return None, 0.0
    return ("A" if a > b else "B"), (max(a, b) + 1) / (answered + 2)
