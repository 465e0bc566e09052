"""metrics.selective_labels: the Clopper–Pearson bound against scipy, the agreement guarantee in
simulation, and the rules of the fixed-sequence walk on hand-built data."""

import numpy as np
import pytest

from metrics.selective_labels import (
    Calibration,
    calibrate,
    clopper_pearson_lower,
    confidence_from_votes,
)

# --- Clopper–Pearson -------------------------------------------------------------------------


@pytest.mark.parametrize("trials", [1, 5, 30, 200])
@pytest.mark.parametrize("delta", [0.05, 0.1])
def test_clopper_pearson_lower_equals_the_beta_quantile(trials, delta):
    stats = pytest.importorskip("scipy.stats")
    for successes in range(trials + 1):
        failures = trials - successes
        expected = 0.0 if successes == 0 else stats.beta.ppf(delta, successes, failures + 1)
        assert clopper_pearson_lower(successes, trials, delta) == pytest.approx(expected, abs=1e-9)


def test_clopper_pearson_lower_by_hand():
    # All n trials succeed: P(X >= n) = p^n = delta, so p = delta^(1/n).
    assert clopper_pearson_lower(10, 10, 0.05) == pytest.approx(0.05 ** (1 / 10), abs=1e-11)
    # One trial, one success: the bound is delta itself.
    assert clopper_pearson_lower(1, 1, 0.1) == pytest.approx(0.1, abs=1e-11)
    assert clopper_pearson_lower(0, 50, 0.1) == 0.0


@pytest.mark.parametrize(
    ("successes", "trials", "delta"), [(-1, 5, 0.1), (6, 5, 0.1), (3, 5, 0.0), (3, 5, 1.0)]
)
def test_clopper_pearson_lower_rejects_impossible_inputs(successes, trials, delta):
    with pytest.raises(ValueError):
        clopper_pearson_lower(successes, trials, delta)


# --- the guarantee, simulated ----------------------------------------------------------------

ALPHA, DELTA = 0.15, 0.1
SEEDS = 300


def draw_pairs(rng, count):
    """A pool whose agreement with the experts rises with the judges' confidence: confidence c
    uniform on [0.5, 1], agreement with probability c. Among the pairs with c >= t the agreement is
    (1 + t) / 2, so 1 - ALPHA = 0.85 is reached from t = 0.7 on, which covers 60 % of the pool."""
    confidence = rng.uniform(0.5, 1.0, count)
    return confidence, rng.random(count) < confidence


def held_out_agreement(threshold, confidence, agrees):
    return agrees[confidence >= threshold].mean()


def plug_in_threshold(confidence, agrees):
    """The lowest threshold (with at least 30 pairs above it) whose empirical agreement reaches
    1 - ALPHA: what calibrate would answer with no confidence bound."""
    order = np.argsort(-confidence)
    running = np.cumsum(agrees[order]) / np.arange(1, len(order) + 1)
    reaching = np.flatnonzero(running[29:] >= 1 - ALPHA) + 29
    return confidence[order][reaching.max()]


def test_agreement_guarantee_holds_in_simulation():
    violations, coverages = 0, []
    plug_in_violations = 0  # thresholds set on the raw agreement: the harness must catch them
    for seed in range(SEEDS):
        rng = np.random.default_rng(seed)
        rated_confidence, rated_agrees = draw_pairs(rng, 500)
        held_confidence, held_agrees = draw_pairs(rng, 5_000)
        result = calibrate(rated_confidence, rated_agrees, alpha=ALPHA, delta=DELTA)
        coverages.append(result.coverage)
        if result.threshold is not None:
            held_out = held_out_agreement(result.threshold, held_confidence, held_agrees)
            violations += held_out < 1 - ALPHA
        plug_in = plug_in_threshold(rated_confidence, rated_agrees)
        plug_in_violations += held_out_agreement(plug_in, held_confidence, held_agrees) < 1 - ALPHA
    assert violations / SEEDS <= DELTA + 0.03
    # Not by labelling nothing: the oracle threshold 0.7 covers 60 % of the pool.
    assert np.mean(coverages) > 0.3
    # Without the bound the violations are frequent: the simulation can see a broken guarantee.
    assert plug_in_violations / SEEDS > DELTA + 0.1


# --- the walk's rules, on hand-built data ----------------------------------------------------


def grouped(*groups):
    """(confidence, agreeing, disagreeing) groups -> the two per-pair arrays."""
    confidence, agrees = [], []
    for value, agreeing, disagreeing in groups:
        confidence += [value] * (agreeing + disagreeing)
        agrees += [True] * agreeing + [False] * disagreeing
    return confidence, agrees


def test_walk_stops_at_the_first_failure():
    # 0.9: 40 of 40 agree, the bound 0.1^(1/40) = 0.944 passes 0.9. 0.8 adds 20 disagreeing
    # pairs: 40 of 60 fails. 0.7 adds 400 agreeing pairs: 440 of 460 would pass again.
    confidence, agrees = grouped((0.9, 40, 0), (0.8, 0, 20), (0.7, 400, 0))
    assert clopper_pearson_lower(440, 460, 0.1) >= 0.9  # the trap is real
    result = calibrate(confidence, agrees, alpha=0.1, delta=0.1)
    assert result.threshold == 0.9
    assert (result.covered, result.agreement) == (40, 1.0)
    assert result.coverage == pytest.approx(40 / 460)
    assert result.agreement_lower_bound == pytest.approx(0.1 ** (1 / 40), abs=1e-9)


def test_walk_takes_the_lowest_threshold_while_all_pass():
    confidence, agrees = grouped((0.9, 100, 0), (0.8, 100, 5), (0.7, 100, 40))
    # 200 of 205 passes 0.9 at delta 0.1; 300 of 345 (0.87) cannot.
    assert clopper_pearson_lower(200, 205, 0.1) >= 0.9 > clopper_pearson_lower(300, 345, 0.1)
    result = calibrate(confidence, agrees, alpha=0.1, delta=0.1)
    assert (result.threshold, result.covered) == (0.8, 205)


def test_thresholds_below_min_covered_are_skipped_not_failed():
    # 5 disagreeing pairs on top, then 100 agreeing ones: 100 of 105 passes 0.9.
    confidence, agrees = grouped((0.99, 0, 5), (0.9, 100, 0))
    assert calibrate(confidence, agrees, alpha=0.1, delta=0.1, min_covered=30).threshold == 0.9
    # Tested, the top group fails and stops the walk.
    assert calibrate(confidence, agrees, alpha=0.1, delta=0.1, min_covered=1).threshold is None


def test_a_threshold_covering_too_few_pairs_is_never_chosen():
    # 20 of 20 agree at 0.99 (0.1^(1/20) = 0.89 passes 0.85), then 100 disagreeing pairs.
    confidence, agrees = grouped((0.99, 20, 0), (0.5, 0, 100))
    assert calibrate(confidence, agrees, alpha=0.15, delta=0.1, min_covered=20).threshold == 0.99
    assert calibrate(confidence, agrees, alpha=0.15, delta=0.1, min_covered=30).threshold is None


def test_nothing_passes():
    confidence, agrees = grouped((0.9, 30, 10), (0.6, 30, 30))
    result = calibrate(confidence, agrees, alpha=0.05, delta=0.05)
    assert result == Calibration(
        threshold=None,
        alpha=0.05,
        delta=0.05,
        calibration_pairs=100,
        covered=0,
        coverage=0.0,
        agreement=None,
        agreement_lower_bound=None,
    )
    assert result.as_dict()["threshold"] is None and result.as_dict()["calibration_pairs"] == 100
    assert calibrate([], [], alpha=0.1, delta=0.1).threshold is None


def test_calibrate_matches_a_walk_on_the_public_bound():
    """The walk decides each threshold from one binomial tail; a direct walk on
    clopper_pearson_lower must choose the same threshold."""

    def reference(confidence, agrees, alpha, delta, min_covered):
        chosen = None
        for threshold in sorted(set(confidence), reverse=True):
            covered = [a for c, a in zip(confidence, agrees, strict=True) if c >= threshold]
            if len(covered) < min_covered:
                continue
            if clopper_pearson_lower(sum(covered), len(covered), delta) < 1 - alpha:
                break
            chosen = threshold
        return chosen

    rng = np.random.default_rng(11)
    for _ in range(15):
        confidence = np.round(rng.uniform(0.5, 1.0, 120), 2).tolist()  # ties included
        agrees = (rng.random(120) < np.array(confidence) ** 0.5).tolist()
        result = calibrate(confidence, agrees, alpha=0.1, delta=0.1, min_covered=10)
        assert result.threshold == reference(confidence, agrees, 0.1, 0.1, 10)
        if result.threshold is not None:
            above = [a for c, a in zip(confidence, agrees, strict=True) if c >= result.threshold]
            assert (result.covered, result.agreement) == (len(above), sum(above) / len(above))
            assert result.agreement_lower_bound >= 0.9 - 1e-12


@pytest.mark.parametrize(
    ("confidence", "agrees", "alpha", "delta"),
    [
        ([0.9, 0.8], [True], 0.1, 0.1),
        ([0.9], [True], 0.0, 0.1),
        ([0.9], [True], 1.0, 0.1),
        ([0.9], [True], 0.1, 0.0),
        ([0.9], [True], 0.1, 1.0),
        ([float("nan")], [True], 0.1, 0.1),
        ([0.9], [2], 0.1, 0.1),
    ],
)
def test_calibrate_rejects_bad_inputs(confidence, agrees, alpha, delta):
    with pytest.raises(ValueError):
        calibrate(confidence, agrees, alpha=alpha, delta=delta)


# --- votes -----------------------------------------------------------------------------------


def test_confidence_from_votes():
    assert confidence_from_votes(0.75) == ("A", 0.75)
    assert confidence_from_votes(0.25) == ("B", 0.75)
    assert confidence_from_votes(0.5) == ("A", 0.5)
    assert confidence_from_votes(0.0) == ("B", 1.0)
    for share in (-0.1, 1.1, float("nan")):
        with pytest.raises(ValueError):
            confidence_from_votes(share)
