"""Prediction-powered judge accuracy (metrics/judge_ppi.py): the judge's correctness Y, the
leave-one-out prediction f, and the figures built on metrics/ppi.py."""

import numpy as np
import pytest

from metrics import sequential
from metrics.judge_ppi import (
    average_over_tasks,
    difference_sample,
    estimate,
    judge_sample,
    leave_one_out_predictions,
    side_shares,
    task_figures,
)
from metrics.ppi import pool_mean


def test_side_shares_leave_failed_calls_out_and_count_ties_for_neither_side():
    assert side_shares(["A", "B", "tie", None]) == (1 / 3, 1 / 3)
    assert side_shares([None, None]) is None


def test_the_prediction_is_the_judges_expected_correctness_under_the_others_vote():
    shares = {
        "j": {1: (1.0, 0.0), 2: (0.5, 0.5)},
        "k": {1: (1.0, 0.0), 2: (0.0, 1.0)},
        "l": {1: (0.0, 1.0), 2: (0.0, 1.0)},
    }
    predictions = leave_one_out_predictions(shares)
    # On pair 1 the others (k: A, l: B) split evenly: j, who says A, is right half the time.
    assert predictions["j"][1] == pytest.approx(0.5)
    # On pair 2 both others say B: j's half share for B is its expected correctness.
    assert predictions["j"][2] == pytest.approx(0.5)
    # k on pair 1: the others are j (A) and l (B): 1/2; on pair 2: j half A, l B: q(A) = 1/4.
    assert predictions["k"][2] == pytest.approx(0.75)
    # Its own verdict never enters: a lone judge gets the uninformed 1/2 weighting.
    assert leave_one_out_predictions({"j": {1: (1.0, 0.0)}})["j"][1] == pytest.approx(0.5)


def test_a_judges_sample_holds_its_correctness_on_rated_pairs_and_predictions_on_its_pool():
    shares = {1: (1.0, 0.0), 2: (0.25, 0.75), 3: (0.0, 1.0)}
    sample = judge_sample(shares, {1: 0.9, 2: 0.4, 3: 0.2}, {1: "A", 2: "A", 9: "B"})
    assert sample.y == [1.0, 0.25]  # pair 9 was not judged: outside the judge's pool
    assert sample.f_rated == [0.9, 0.4]
    assert sample.f_pool == [0.9, 0.4, 0.2]
    assert (sample.rated, sample.judged) == (2, 3)


def _world(seed: int, pairs: int = 600, rated: int = 150, judges: int = 4):
    """Judges of different skill on pairs of varying difficulty; a random share is rated."""
    rng = np.random.default_rng(seed)
    truth = rng.choice(["A", "B"], size=pairs)
    difficulty = rng.uniform(0, 0.5, size=pairs)
    shares = {}
    for j in range(judges):
        skill = 0.95 - 0.1 * j
        right = rng.random(pairs) < np.clip(skill - difficulty, 0.05, 1)
        shares[f"judge-{j}"] = {
            pair: ((1.0, 0.0) if (truth[pair] == "A") == right[pair] else (0.0, 1.0))
            for pair in range(pairs)
        }
    labelled = rng.choice(pairs, size=rated, replace=False)
    labels = {int(pair): str(truth[pair]) for pair in labelled}
    return shares, labels, truth


def test_the_estimate_is_pool_mean_on_the_judges_sample_and_no_interval_below_the_minimum():
    shares, labels, _truth = _world(seed=1)
    predictions = leave_one_out_predictions(shares)
    sample = judge_sample(shares["judge-0"], predictions["judge-0"], labels)
    figures = estimate(sample, target=0.03)
    reference = pool_mean(sample.y, sample.f_rated, sample.f_pool)
    # Nothing dropped: the kept ratio is PPI++ on the pool; the floor's pseudo-pairs widen the
    # spread a little, never more than a few per cent at 150 rated pairs.
    assert (figures["estimate"], figures["lam"]) == pytest.approx(
        (reference.estimate, reference.lam)
    )
    assert 1 - 1e-12 <= figures["std_error"] / reference.std_error < 1.05
    # The interim interval: the monitored band, its floor re-weighed for the interim level.
    half = (figures["high"] - figures["low"]) / 2
    assert figures["high"] - figures["estimate"] == pytest.approx(half)
    assert half >= sequential.half_width(figures["std_error"], 0.03)
    assert (figures["status"], figures["used"]) == ("interim", 150)
    assert (figures["rated"], figures["judged"]) == (150, 600)
    few = estimate(sample, target=0.03, min_rated=151)
    assert few["estimate"] is None and few["rated"] == 150


def test_the_interval_covers_the_pools_accuracy_and_is_never_wider_than_the_classical():
    covered, ratios = 0, []
    seeds = range(40)
    for seed in seeds:
        shares, labels, truth = _world(seed=seed)
        figures = task_figures(shares, labels, target=0.03)["judges"]
        weakest = figures["judge-3"]
        true_accuracy = np.mean(
            [shares["judge-3"][p][0 if truth[p] == "A" else 1] for p in range(len(truth))]
        )
        covered += weakest["low"] <= true_accuracy <= weakest["high"]
        # The tuned lambda minimises the residual spread, and lambda = 0 is the classical one.
        for judge in figures.values():
            width = judge["high"] - judge["low"]
            classical = judge["classical_high"] - judge["classical_low"]
            assert width <= classical * (1 + 1e-12)
        ratios.append(
            (weakest["high"] - weakest["low"])
            / (weakest["classical_high"] - weakest["classical_low"])
        )
    assert covered >= 0.85 * len(seeds)
    assert np.mean(ratios) < 0.96  # the other judges know something of the weakest one's errors


def test_the_plan_needs_fewer_pairs_prediction_powered_and_none_once_the_target_is_met():
    shares, labels, _truth = _world(seed=3)
    figures = task_figures(shares, labels, target=0.03)["judges"]["judge-2"]
    assert figures["needed_powered"] <= figures["needed_classical"] <= 600
    assert figures["more_powered"] == max(figures["needed_powered"] - 150, 0)
    loose = task_figures(shares, labels, target=0.5)["judges"]["judge-2"]
    assert loose["more_powered"] == loose["more_classical"] == 0


def test_the_closest_judges_difference_is_paired_on_the_pairs_both_judged():
    shares, labels, _truth = _world(seed=4)
    figures = task_figures(shares, labels, target=0.03)
    closest = figures["closest"]
    better, worse = closest["judges"]
    assert figures["judges"][better]["estimate"] >= figures["judges"][worse]["estimate"]
    predictions = leave_one_out_predictions(shares)
    sample = difference_sample(shares, predictions, labels, better, worse)
    reference = pool_mean(sample.y, sample.f_rated, sample.f_pool).estimate
    assert closest["estimate"] == pytest.approx(reference, abs=1e-12)


def test_the_average_over_tasks_needs_every_task():
    one = {"estimate": 0.8, "low": 0.76, "high": 0.84, "rated": 100, "judged": 400}
    two = {"estimate": 0.6, "low": 0.57, "high": 0.63, "rated": 80, "judged": 300}
    average = average_over_tasks([one, two])
    assert average["estimate"] == pytest.approx(0.7)
    assert average["high"] - average["estimate"] == pytest.approx((0.04**2 + 0.03**2) ** 0.5 / 2)
    assert average_over_tasks([one, {**two, "estimate": None}]) is None
