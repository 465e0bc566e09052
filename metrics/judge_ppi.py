"""Prediction-powered judge accuracy (docs/architecture.md §6.6): each judge's accuracy on the
pairs the experts keep, over the task's whole pool, from the experts' decisions on the rated
pairs and, on every pair, a prediction of the judge's correctness built from the other judges'
verdicts; monitored so that looking after every rating keeps the stated level.

Per judge and pair, a verdict row's choices give the judge's shares of trials for A and for B
(a failed call, choice None, is left out; tie and invalid count for neither, so they are wrong
as in metrics/judge_accuracy.py). On a rated pair the judge's correctness is Y = its share for
the label. The prediction leaves the judge out: the other judges' shares for A and B, summed
over the judges (each judge one vote, split by its trials), give q = P(label is A); then
f = q * share_A + (1 - q) * share_B, the judge's expected correctness if the others are right.
With no other judge on a pair, q = 1/2.

The population is the judge's pool in the task: the pairs in the experts' queue that it answered
(metrics/inputs.py::pool_votes), dropped ones included, and the figure is its accuracy on the
ones the experts keep (metrics/kept_ratio.py). The rated pairs that count are the decided pairs
drawn before the first pair still undecided (`counted_pairs`): the claim serves pairs by their
draw, so they are a simple random sample of the pool (in a sample, by draw / weight, with known
inclusion probabilities). Pairs are weighted equally, where the rated-only figure weighs
trials: the two agree when every pair has the same number of trials.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean
from typing import Any

import numpy as np

from metrics import sequential
from metrics.judge_plan import closest_plan, judge_plan
from metrics.kept_ratio import RatioPath, sample_estimate, uniform_path

MIN_RATED = 50  # fewer rated pairs: no prediction-powered interval is shown
MIN_RATED_ACTIVE = 100  # the same for a sample chosen for information
ACCURACY_RANGE = (0.0, 1.0)
DIFFERENCE_RANGE = (-1.0, 1.0)

Shares = tuple[float, float]  # the judge's share of trials for A, for B
JudgeShares = Mapping[Any, Mapping[int, Shares]]  # judge -> pair -> shares
Outcomes = Mapping[int, str | None]  # decided pair -> the experts' side; None: dropped


def side_shares(choices: Iterable[str | None]) -> Shares | None:
    """A judge's shares of its answered trials on one pair for A and for B; None when every call
    failed (the pair is not in the judge's pool)."""
    answered = [choice for choice in choices if choice is not None]
    if not answered:
        return None
    return answered.count("A") / len(answered), answered.count("B") / len(answered)


def leave_one_out_predictions(shares: JudgeShares) -> dict[Any, dict[int, float]]:
    """Per judge and pair, the judge's expected correctness if the other judges' soft vote is
    the truth (the module's docstring)."""
    total_a: dict[int, float] = {}
    total_b: dict[int, float] = {}
    for by_pair in shares.values():
        for pair, (a, b) in by_pair.items():
            total_a[pair] = total_a.get(pair, 0.0) + a
            total_b[pair] = total_b.get(pair, 0.0) + b
    predictions: dict[Any, dict[int, float]] = {}
    for judge, by_pair in shares.items():
        mine = predictions[judge] = {}
        for pair, (a, b) in by_pair.items():
            others_a = max(total_a[pair] - a, 0.0)  # sums of floats: never below zero
            others_b = max(total_b[pair] - b, 0.0)
            voted = others_a + others_b
            q = others_a / voted if voted > 1e-12 else 0.5
            mine[pair] = q * a + (1 - q) * b
    return predictions


@dataclass(frozen=True)
class Counted:
    """The decided pairs that count, in the order they were drawn: those whose key (draw, or
    draw / weight in a sample) lies below `t`, the key of the first pool pair still undecided.
    In a sample, `weights` gives each one's inclusion probability at any t: min(1, t·w)."""

    order: list[int]
    t: float = float("inf")
    keys: Mapping[int, float] | None = None  # a sample's keys and weights; None: uniform
    weights: Mapping[int, float] | None = None

    def inclusion(self, prefix: int) -> list[float]:
        """The inclusion probabilities of the first `prefix` pairs, at the key of the next."""
        assert self.keys is not None and self.weights is not None
        at = self.keys[self.order[prefix]] if prefix < len(self.order) else self.t
        return [min(1.0, at * self.weights[pair]) for pair in self.order[:prefix]]


def counted_pairs(design: Mapping[int, tuple[float, float, bool]], *, sampled: bool) -> Counted:
    """`design` holds each pool pair's (draw, weight, still undecided); in the default mode the
    weight is ignored (every pair weighs 1). Decided pairs after the first undecided one (rated
    out of order: another annotator after a skip) wait for it."""
    keys = {p: draw / (weight if sampled else 1.0) for p, (draw, weight, _) in design.items()}
    t = min((keys[p] for p, (_, _, undecided) in design.items() if undecided), default=np.inf)
    order = sorted((p for p, (_, _, undecided) in design.items() if not undecided and keys[p] < t),
                   key=lambda p: (keys[p], p))  # fmt: skip
    if not sampled:
        return Counted(order, float(t))
    return Counted(order, float(t), keys, {p: weight for p, (_, weight, _) in design.items()})


def sample_progress(
    design: Mapping[int, tuple[float, float, bool]], counted: Counted
) -> dict[str, Any]:
    """Where a sample stands: how many decided pairs its estimate counts, and how many were
    decided after the first pair still undecided, which count only once `waiting_on`, that
    pair, is decided. A pair nobody will rate holds them back for good, so the lead is shown
    which one."""
    undecided = [(d / w, p) for p, (d, w, still_open) in design.items() if still_open]
    rated_after = len(design) - len(counted.order) - len(undecided)
    return {
        "counted": len(counted.order),
        "rated_after": rated_after,
        "waiting_on": min(undecided)[1] if undecided and rated_after else None,
    }


@dataclass(frozen=True)
class JudgeSample:
    """One judge's (or one difference's) inputs on the counted rated pairs, in draw order: Y
    (0 on a dropped pair), K (1 kept, 0 dropped) and f; f on the whole pool."""

    y: list[float]
    kept: list[float]
    f_rated: list[float]
    f_pool: list[float]
    counted: Counted
    ends: tuple[float, float] = ACCURACY_RANGE

    @property
    def rated(self) -> int:
        return len(self.y)

    @property
    def judged(self) -> int:
        return len(self.f_pool)


def _legacy_counted(outcomes: Outcomes, counted: Counted | None) -> Counted:
    return counted if counted is not None else Counted(sorted(outcomes))


def _correct(shares: Shares, side: str | None) -> float:
    """The judge's correctness on a decided pair; 0 on a dropped one (K = 0 there anyway)."""
    return shares[0 if side == "A" else 1] if side else 0.0


def judge_sample(
    shares: Mapping[int, Shares],
    predictions: Mapping[int, float],
    outcomes: Outcomes,
    counted: Counted | None = None,
) -> JudgeSample:
    """`counted`: the counted pairs in draw order (default: the pairs of `outcomes`)."""
    order = [p for p in _legacy_counted(outcomes, counted).order if p in shares and p in outcomes]
    sides = [outcomes[p] for p in order]
    return JudgeSample(
        y=[_correct(shares[p], side) for p, side in zip(order, sides, strict=True)],
        kept=[1.0 if side else 0.0 for side in sides],
        f_rated=[predictions[p] for p in order],
        f_pool=[predictions[p] for p in sorted(shares)],
        counted=_restricted(_legacy_counted(outcomes, counted), order),
    )


def difference_sample(
    shares: JudgeShares,
    predictions: Mapping[Any, Mapping[int, float]],
    outcomes: Outcomes,
    a: Any,
    b: Any,
    counted: Counted | None = None,
) -> JudgeSample:
    """Judge a minus judge b, paired on the pairs both answered."""
    both = set(shares[a]) & set(shares[b])
    order = [p for p in _legacy_counted(outcomes, counted).order if p in both and p in outcomes]

    def correct(judge: Any, pair: int) -> float:
        return shares[judge][pair][0 if outcomes[pair] == "A" else 1]

    return JudgeSample(
        y=[correct(a, p) - correct(b, p) if outcomes[p] else 0.0 for p in order],
        kept=[1.0 if outcomes[p] else 0.0 for p in order],
        f_rated=[predictions[a][p] - predictions[b][p] for p in order],
        f_pool=[predictions[a][p] - predictions[b][p] for p in sorted(both)],
        counted=_restricted(_legacy_counted(outcomes, counted), order),
        ends=DIFFERENCE_RANGE,
    )


def _restricted(counted: Counted, order: list[int]) -> Counted:
    return Counted(order, counted.t, counted.keys, counted.weights)


def _path(sample: JudgeSample, least: int) -> RatioPath:
    """The estimator at every prefix of the counted pairs (NaN below `least`)."""
    if sample.counted.keys is None:
        return uniform_path(sample.y, sample.kept, sample.f_rated, sample.f_pool, ends=sample.ends)
    columns = np.full((5, sample.rated), np.nan)
    for prefix in range(max(least, 3), sample.rated + 1):
        if not any(sample.kept[:prefix]):
            continue
        one = sample_estimate(
            sample.y[:prefix],
            sample.kept[:prefix],
            sample.f_rated[:prefix],
            sample.counted.inclusion(prefix),
            sample.f_pool,
            ends=sample.ends,
        )
        columns[:, prefix - 1] = (
            one.estimate, one.std_error, one.classical, one.classical_std_error, one.lam,
        )  # fmt: skip
    return RatioPath(*columns)


@dataclass(frozen=True)
class Looks:
    """What the page shows after each rating (index k - `least` for the first k counted pairs,
    from `least` on): the estimate and its monitored interval; from the first look at which the
    figure is final, the final one (frozen). `final_at`: that look's number of pairs, or None."""

    least: int
    estimate: np.ndarray
    low: np.ndarray
    high: np.ndarray
    final_at: int | None


def band_errors(path: RatioPath, target: float, *, classical: bool = False) -> np.ndarray:
    """The standard errors the monitored interval is built on: at an interim look (critical
    value b above c), the variance floor's pseudo-pairs weigh b²/2 (metrics/kept_ratio.py)."""
    errors = path.classical_std_error if classical else path.std_error
    if path.errors_with is None:
        return errors
    return path.errors_with(_levels(errors, target) ** 2 / 2, classical)


def _levels(errors: np.ndarray, target: float) -> np.ndarray:
    """sequential.level at every look."""
    c = sequential.critical_value()
    levels: np.ndarray = np.clip(c * c * np.nan_to_num(errors) / target, c, sequential.CAP)
    return levels


def looks(sample: JudgeSample, path: RatioPath, *, target: float, least: int) -> Looks:
    """Every look's figure, as `estimate` shows the last one (metrics/sequential.py): final
    once c·SE ≤ target, and frozen from then on."""
    shown = band_errors(path, target)[least - 1 :]
    errors = shown
    values = path.estimate[least - 1 :].copy()
    c = sequential.critical_value()
    with np.errstate(invalid="ignore"):
        halves = _levels(shown, target) * shown
        final = np.flatnonzero(c * errors <= target)
    if final.size:  # frozen from the first final look on
        first = int(final[0])
        values[first:], halves[first:] = values[first], halves[first]
    return Looks(
        least=least,
        estimate=values,
        low=values - halves,
        high=values + halves,
        final_at=least + int(final[0]) if final.size else None,
    )


def estimate(
    sample: JudgeSample, *, target: float, min_rated: int = MIN_RATED, path: RatioPath | None = None
) -> dict[str, Any]:
    """The monitored figure (metrics/sequential.py) at today's look: the estimate and its
    interval, or, once a look reached the planned information, that look's (`status` "final",
    frozen there: `used` says on how many rated pairs). The classical interval beside it is
    monitored the same way on the same pairs. No interval below `min_rated`
    (MIN_RATED_ACTIVE in a sample)."""
    sampled = sample.counted.keys is not None
    figures: dict[str, Any] = {
        "rated": sample.rated,
        "judged": sample.judged,
        "dropped": sample.rated - int(sum(sample.kept)),
        "design": "sample" if sampled else "uniform",
    }
    least = max(min_rated, MIN_RATED_ACTIVE if sampled else 0, 2)
    figures["least"] = least  # the page says how many rated pairs an estimate waits for
    empty = {"estimate": None, "low": None, "high": None, "lam": None, "status": None, "used": 0}
    if sample.rated < least:
        return {**figures, **empty}
    path = path if path is not None else _path(sample, least)
    seen = looks(sample, path, target=target, least=least)
    used = seen.final_at or sample.rated
    if not np.isfinite(seen.estimate[-1]):  # nothing kept yet
        return {**figures, **empty}
    index = used - 1
    classical = float(path.classical[index])
    classical_error = float(band_errors(path, target, classical=True)[index])
    classical_half = sequential.half_width(classical_error, target)
    return {
        **figures,
        "estimate": float(seen.estimate[-1]),
        "low": float(seen.low[-1]),
        "high": float(seen.high[-1]),
        "std_error": float(path.std_error[index]),
        "lam": float(path.lam[index]),
        "classical_low": classical - classical_half,
        "classical_high": classical + classical_half,
        "status": "final" if seen.final_at else "interim",
        "used": used,
    }


def _told_apart(seen: Looks) -> bool:
    """Whether the difference's monitored interval excluded 0 at any look so far: a decision
    taken at any look stands (the band's guarantee covers every look)."""
    with np.errstate(invalid="ignore"):
        return bool(np.any((seen.low > 0) | (seen.high < 0)))


def plan_summary(judges: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A task's plan over its judges: the most rated pairs any judge still needs for a final
    figure at the planned width, classical and prediction-powered, and whether every judge has
    them. Met only where every judge shows an interval: never from fewer than the minimum of
    rated pairs (a pool of 4 pairs, all rated, is not known to ± anything)."""
    judges = list(judges)
    planned = [f for f in judges if f.get("more_powered") is not None]
    return {
        "pool_too_small": bool(judges) and all(f.get("pool_too_small") for f in judges),
        "more_classical": max((f["more_classical"] for f in planned), default=None),
        "more_powered": max((f["more_powered"] for f in planned), default=None),
        "met": bool(planned)
        and all(f["more_powered"] == 0 and f.get("estimate") is not None for f in planned),
    }


def average_over_tasks(estimates: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The multi-task figure (MMRB2 averages task accuracies): the mean of the task estimates,
    its interval from their half-widths (the tasks' pools are disjoint, so independent; each
    monitored interval is valid at every look, and so is their combination at the same level
    only approximately: it is labelled interim unless every task is final). None unless every
    task has an estimate."""
    if not estimates or any(e["estimate"] is None for e in estimates):
        return None
    value = fmean(e["estimate"] for e in estimates)
    half = sum(((e["high"] - e["low"]) / 2) ** 2 for e in estimates) ** 0.5 / len(estimates)
    return {
        "estimate": value,
        "low": value - half,
        "high": value + half,
        "rated": sum(e["rated"] for e in estimates),
        "judged": sum(e["judged"] for e in estimates),
        "status": "final" if all(e.get("status") == "final" for e in estimates) else "interim",
    }


def task_figures(
    shares: JudgeShares,
    outcomes: Outcomes,
    *,
    target: float,
    plan_width: float | None = None,
    min_rated: int = MIN_RATED,
    counted: Counted | None = None,
) -> dict[str, Any]:
    """Everything prediction-powered of one task: per judge the monitored figure (at the
    project's `target` half-width) and the plan for ± `plan_width` (the target unless another
    is asked); the two judges whose estimates are closest, their paired difference, whether
    it is told apart, and the plan to tell them apart (metrics/judge_plan.py)."""
    width = target if plan_width is None else plan_width
    predictions = leave_one_out_predictions(shares)
    judges: dict[Any, dict[str, Any]] = {}
    for judge in shares:
        sample = judge_sample(shares[judge], predictions[judge], outcomes, counted)
        least = max(min_rated, MIN_RATED_ACTIVE if sample.counted.keys is not None else 0, 2)
        path = _path(sample, least) if sample.rated >= 3 else None
        judges[judge] = {
            **estimate(sample, target=target, min_rated=min_rated, path=path),
            **judge_plan(sample, path, width, least),
        }
    ranked = sorted((f["estimate"], j) for j, f in judges.items() if f["estimate"] is not None)
    closest = None
    if len(ranked) >= 2:
        _gap, (_, better), (_, worse) = min(
            (high[0] - low[0], high, low) for low, high in zip(ranked, ranked[1:], strict=False)
        )
        sample = difference_sample(shares, predictions, outcomes, better, worse, counted)
        least = max(min_rated, MIN_RATED_ACTIVE if sample.counted.keys is not None else 0, 2)
        path = _path(sample, least) if sample.rated >= 3 else None
        difference = estimate(sample, target=target, min_rated=min_rated, path=path)
        told = path is not None and difference["estimate"] is not None
        if path is not None and told:
            told = _told_apart(looks(sample, path, target=target, least=least))
        closest = {
            "judges": [better, worse],
            **difference,
            "told_apart": told,
            **closest_plan(sample, path, difference["estimate"], target),
        }
    return {"judges": judges, "closest": closest}
