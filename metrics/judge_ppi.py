"""Prediction-powered judge accuracy (issue 27; docs/architecture.md §6.6): each judge's
accuracy on a task's whole pool of pairs, from the experts' labels on the rated pairs and, on
every pair, a prediction of the judge's correctness built from the other judges' verdicts.

Per judge and pair, a verdict row's choices give the judge's shares of trials for A and for B
(a failed call, choice None, is left out; tie and invalid count for neither, so they are wrong
as in metrics/judge_accuracy.py). On a rated pair the judge's correctness is Y = its share for
the label. The prediction leaves the judge out: the other judges' shares for A and B, summed
over the judges (each judge one vote, split by its trials), give q = P(label is A); then
f = q * share_A + (1 - q) * share_B, the judge's expected correctness if the others are right.
With no other judge on a pair, q = 1/2. The estimator (metrics/ppi.py::pool_mean) is unbiased
whatever the quality of f; a good f only narrows the interval, and the power tuning makes a
useless one cost nothing (lambda near 0: the classical interval).

The population is the judge's pool in the task: the pairs in the experts' queue that it answered
(queued, in progress, complete or kept; see metrics/inputs.py::pool_votes). The guarantee
assumes the rated pairs are a simple random sample of that pool; a pool pair that the experts
will drop once rated is in the pool but can never be in the rated set (a small bias, stated in
the docs). Pairs are weighted equally, where the rated-only figure weighs trials: the two agree
when every pair has the same number of trials.
"""

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from statistics import fmean, stdev
from typing import Any

from metrics.ppi import MeanEstimate, active_mean, classical_mean, pool_mean, ratings_needed

MIN_RATED = 50  # fewer rated pairs: no prediction-powered interval is shown (issue 27)
MIN_RATED_ACTIVE = 100  # the same for a sample chosen for information

Shares = tuple[float, float]  # the judge's share of trials for A, for B
JudgeShares = Mapping[Any, Mapping[int, Shares]]  # judge -> pair -> shares


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
class JudgeSample:
    """One judge's (or one difference's) inputs: Y and f on the rated pairs, f on the pool;
    in a sample chosen for information, each rated pair's inclusion probability."""

    y: list[float]
    f_rated: list[float]
    f_pool: list[float]
    pi: list[float] | None = None

    @property
    def rated(self) -> int:
        return len(self.y)

    @property
    def judged(self) -> int:
        return len(self.f_pool)


def judge_sample(
    shares: Mapping[int, Shares],
    predictions: Mapping[int, float],
    labels: Mapping[int, str],
    inclusion: Mapping[int, float] | None = None,
) -> JudgeSample:
    """`inclusion`, in a sample: the rated pairs that count (see `sample_inclusion`) with their
    probability of having been drawn; the others are left out of the rated set."""
    pool = sorted(shares)
    rated = [p for p in pool if p in labels and (inclusion is None or p in inclusion)]
    return JudgeSample(
        y=[shares[pair][0 if labels[pair] == "A" else 1] for pair in rated],
        f_rated=[predictions[pair] for pair in rated],
        f_pool=[predictions[pair] for pair in pool],
        pi=None if inclusion is None else [inclusion[pair] for pair in rated],
    )


def sample_inclusion(design: Mapping[int, tuple[float, float, bool]]) -> dict[int, float]:
    """A sample's rated pairs that count, with their inclusion probabilities. `design` holds
    each pool pair's (draw, weight, still open). Pairs are served by draw / weight; the rated
    set that is a Poisson sample is the run of decided pairs before the first one still open,
    with t that pair's key: pair i is in it when draw_i < t * weight_i, probability
    min(1, t * weight_i). Decided pairs after it (rated out of order) are left out."""
    open_keys = [draw / weight for draw, weight, still_open in design.values() if still_open]
    t = min(open_keys, default=float("inf"))
    return {
        pair: min(1.0, t * weight)
        for pair, (draw, weight, still_open) in design.items()
        if not still_open and draw / weight < t
    }


def sample_progress(design: Mapping[int, tuple[float, float, bool]]) -> dict[str, Any]:
    """Where a sample stands (`design` as for `sample_inclusion`): how many rated pairs its
    estimate counts, and how many were rated after the first pair still open (out of the
    draw's order: by another annotator after a skip, say), which count only once
    `waiting_on`, that open pair, is decided. A pair nobody will rate holds them back for
    good, so the lead is shown which one."""
    counted = len(sample_inclusion(design))
    open_keys = [(d / w, pair) for pair, (d, w, still_open) in design.items() if still_open]
    rated_after = len(design) - counted - len(open_keys)
    return {
        "counted": counted,
        "rated_after": rated_after,
        "waiting_on": min(open_keys)[1] if open_keys and rated_after else None,
    }


def difference_sample(
    shares: JudgeShares,
    predictions: Mapping[Any, Mapping[int, float]],
    labels: Mapping[int, str],
    a: Any,
    b: Any,
    inclusion: Mapping[int, float] | None = None,
) -> JudgeSample:
    """Judge a minus judge b, paired on the pairs both answered."""
    pool = sorted(set(shares[a]) & set(shares[b]))
    rated = [p for p in pool if p in labels and (inclusion is None or p in inclusion)]

    def correct(judge: Any, pair: int) -> float:
        return shares[judge][pair][0 if labels[pair] == "A" else 1]

    return JudgeSample(
        y=[correct(a, pair) - correct(b, pair) for pair in rated],
        f_rated=[predictions[a][pair] - predictions[b][pair] for pair in rated],
        f_pool=[predictions[a][pair] - predictions[b][pair] for pair in pool],
        pi=None if inclusion is None else [inclusion[pair] for pair in rated],
    )


def _powered(sample: JudgeSample) -> MeanEstimate:
    if sample.pi is not None:
        return active_mean(sample.y, sample.f_rated, sample.pi, sample.f_pool)
    return pool_mean(sample.y, sample.f_rated, sample.f_pool)


def estimate(
    sample: JudgeSample, *, min_rated: int = MIN_RATED, powered: MeanEstimate | None = None
) -> dict[str, Any]:
    """The prediction-powered figure with its interval and the classical interval on the same
    pool (both with the finite-population correction); the interval only from `min_rated`
    (MIN_RATED_ACTIVE in a sample). In a sample the figure is the active one (weighted back by
    the inclusion probabilities); the classical interval then assumes a uniform draw."""
    figures: dict[str, Any] = {
        "rated": sample.rated,
        "judged": sample.judged,
        "design": "uniform" if sample.pi is None else "sample",
    }
    least = max(min_rated, MIN_RATED_ACTIVE if sample.pi is not None else 0, 2)
    if sample.rated < least:
        return {**figures, "estimate": None, "low": None, "high": None, "lam": None}
    powered = powered or _powered(sample)
    classical = classical_mean(sample.y, pool=sample.judged)
    return {
        **figures,
        "estimate": powered.estimate,
        "low": powered.low,
        "high": powered.high,
        "lam": powered.lam,
        "classical_low": classical.low,
        "classical_high": classical.high,
    }


def _residual_sd(sample: JudgeSample, powered: MeanEstimate) -> float:
    return stdev(y - powered.lam * f for y, f in zip(sample.y, sample.f_rated, strict=True))


def plan(
    sample: JudgeSample, half_width: float, powered: MeanEstimate | None = None
) -> dict[str, Any]:
    """How many rated pairs the pool needs for an interval of ± `half_width`, classical and
    prediction-powered (the planner's model: today's spreads hold as more pairs are rated), and
    how many more that is than today's."""
    if sample.rated < 3 or half_width <= 0:
        return {"needed_classical": None, "needed_powered": None}
    powered = powered or _powered(sample)
    classical_n = ratings_needed(stdev(sample.y), half_width, pool=sample.judged)
    powered_n = ratings_needed(_residual_sd(sample, powered), half_width, pool=sample.judged)
    return {
        "needed_classical": classical_n,
        "needed_powered": powered_n,
        "more_classical": max(classical_n - sample.rated, 0),
        "more_powered": max(powered_n - sample.rated, 0),
    }


def _figures(sample: JudgeSample, half_width: float, min_rated: int) -> dict[str, Any]:
    """`estimate` and `plan` of one sample, the estimator run once for both."""
    powered = _powered(sample) if sample.rated >= 3 else None
    return {
        **estimate(sample, min_rated=min_rated, powered=powered),
        **plan(sample, half_width, powered),
    }


def plan_summary(judges: Iterable[Mapping[str, Any]]) -> dict[str, Any]:
    """A task's plan over its judges: the most rated pairs any judge needs for the target,
    classical and prediction-powered, and whether every judge has reached it."""
    planned = [f for f in judges if f.get("more_powered") is not None]
    return {
        "more_classical": max((f["more_classical"] for f in planned), default=None),
        "more_powered": max((f["more_powered"] for f in planned), default=None),
        "met": bool(planned) and all(f["more_powered"] == 0 for f in planned),
    }


def average_over_tasks(estimates: Sequence[dict[str, Any]]) -> dict[str, Any] | None:
    """The multi-task figure (MMRB2 averages task accuracies): the mean of the task estimates,
    its interval from their standard errors (the tasks' pools are disjoint, so independent).
    None unless every task has an estimate."""
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
    }


def task_figures(
    shares: JudgeShares,
    labels: Mapping[int, str],
    *,
    half_width: float,
    min_rated: int = MIN_RATED,
    inclusion: Mapping[int, float] | None = None,
) -> dict[str, Any]:
    """Everything prediction-powered of one task: per judge the estimate and the plan for an
    interval of ± `half_width`; the two judges whose estimates are closest, their paired
    difference and how many rated pairs would separate them at 95 %. `inclusion`: the task
    rates a sample (`sample_inclusion`)."""
    predictions = leave_one_out_predictions(shares)
    judges: dict[Any, dict[str, Any]] = {}
    for judge in shares:
        sample = judge_sample(shares[judge], predictions[judge], labels, inclusion)
        judges[judge] = _figures(sample, half_width, min_rated)
    ranked = sorted((f["estimate"], j) for j, f in judges.items() if f["estimate"] is not None)
    closest = None
    if len(ranked) >= 2:
        _gap, (_, better), (_, worse) = min(
            (high[0] - low[0], high, low) for low, high in zip(ranked, ranked[1:], strict=False)
        )
        sample = difference_sample(shares, predictions, labels, better, worse, inclusion)
        powered = _powered(sample) if sample.rated >= 3 else None
        difference = estimate(sample, min_rated=min_rated, powered=powered)
        # Separated once the difference's interval excludes 0: half as wide as it is now.
        closest = {
            "judges": [better, worse],
            **difference,
            **plan(sample, abs(difference["estimate"] or 0.0), powered),
        }
    return {"judges": judges, "closest": closest}
