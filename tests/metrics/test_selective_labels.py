"""metrics.selective_labels: the hypergeometric tail against scipy, the judges' vote, the rules
of the fixed-sequence walk on hand-built data, the checkpoints, and the guarantee in simulation
as a lead uses it (exporting after every rating), against the way labels were calibrated before
(kept pairs only, the A/B share as confidence, recalibrated at every export)."""

import math

import numpy as np
import pytest

from metrics.selective_labels import (
    FIRST_CHECKPOINT,
    Calibration,
    calibrate,
    certify,
    checkpoint,
    delta_at,
    fixed_sequence_threshold,
    hypergeometric_cdf,
    judge_vote,
    labelled_agreement_at_least,
)

stats = pytest.importorskip("scipy.stats")

# --- the hypergeometric tail -----------------------------------------------------------------


@pytest.mark.parametrize(
    ("population", "marked", "draws"),
    [(1, 0, 1), (1, 1, 1), (10, 3, 4), (60, 30, 59), (500, 51, 120), (20_000, 2_001, 300)],
)
def test_hypergeometric_cdf_equals_scipy(population, marked, draws):
    for observed in range(-1, min(marked, draws) + 2):
        expected = stats.hypergeom.cdf(observed, population, marked, draws)
        assert hypergeometric_cdf(observed, population, marked, draws) == pytest.approx(
            expected, rel=1e-9, abs=1e-300
        )


def test_hypergeometric_cdf_keeps_the_order_of_tiny_tails():
    # Far below the smallest float's square: still ordered, never NaN.
    tails = [hypergeometric_cdf(k, 100_000, 50_000, 5_000) for k in (0, 100, 1_000, 2_400)]
    assert tails == sorted(tails) and tails[0] == 0.0 and 0 < tails[-1] < 0.5


def test_hypergeometric_cdf_rejects_impossible_inputs():
    with pytest.raises(ValueError):
        hypergeometric_cdf(1, 10, 11, 5)
    with pytest.raises(ValueError):
        hypergeometric_cdf(1, 10, 5, 11)


# --- the judges' vote ------------------------------------------------------------------------


def test_a_lone_vote_among_ties_is_unsure():
    side, sure = judge_vote(1, 0, 24)  # one A, 23 ties or answers naming no side
    assert side == "A" and sure == pytest.approx(2 / 26)
    assert judge_vote(0, 24, 24) == ("B", 25 / 26)
    # More trials for a side, surer; the same votes among more ties, less sure.
    assert judge_vote(5, 0, 5)[1] > judge_vote(1, 0, 1)[1] > judge_vote(1, 0, 3)[1]
    assert judge_vote(5, 0, 5)[1] > judge_vote(5, 0, 9)[1]
    assert judge_vote(3, 3, 8) == (None, 0.0)  # no side, never labelled
    assert judge_vote(0, 0, 0) == (None, 0.0)  # no trial at all
    for impossible in ((-1, 0, 1), (3, 2, 4)):
        with pytest.raises(ValueError):
            judge_vote(*impossible)


# --- the walk's rules, on hand-built data ----------------------------------------------------


def grouped(*groups):
    """(confidence, agreeing, disagreeing) groups -> the two per-pair arrays."""
    confidence, agrees = [], []
    for value, agreeing, disagreeing in groups:
        confidence += [value] * (agreeing + disagreeing)
        agrees += [True] * agreeing + [False] * disagreeing
    return np.array(confidence), np.array(agrees)


def certifies(missing, covered, sampled, alpha, delta):
    """The walk's test at one threshold, through scipy."""
    least_false = math.floor(alpha * covered) + 1
    return stats.hypergeom.cdf(missing, covered, least_false, sampled) <= delta


def walk(confidence, agrees, pool=None, *, alpha=0.1, delta=0.1, min_covered=30):
    pool = confidence if pool is None else pool
    return fixed_sequence_threshold(
        confidence, agrees, pool=pool, alpha=alpha, delta=delta, min_covered=min_covered
    )


def test_walk_stops_at_the_first_failure():
    # The calibration is the whole pool here: 0.9: 40 of 40 agree; 0.8 adds 20 disagreeing
    # pairs (40 of 60 fails); 0.7 adds 400 agreeing ones (20 of 460 would pass again).
    confidence, agrees = grouped((0.9, 40, 0), (0.8, 0, 20), (0.7, 400, 0))
    assert certifies(20, 460, 460, 0.1, 0.1)  # the trap is real
    found = walk(confidence, agrees)
    assert (found.threshold, found.covered, found.calibration_agreeing) == (0.9, 40, 40)


def test_walk_takes_the_lowest_threshold_while_all_pass():
    confidence, agrees = grouped((0.9, 100, 0), (0.8, 100, 5), (0.7, 100, 40))
    pool = np.concatenate([confidence, confidence])  # as many pairs again, unrated
    assert certifies(5, 410, 205, 0.1, 0.1) and not certifies(45, 690, 345, 0.1, 0.1)
    found = walk(confidence, agrees, pool)
    assert (found.threshold, found.covered, found.calibration_covered) == (0.8, 410, 205)


def test_a_small_sample_says_less_of_a_large_pool():
    # 60 of 60 agree at 0.9: the whole pool (nothing left to doubt), or 10 % of a pool of 600.
    confidence, agrees = grouped((0.9, 60, 0), (0.6, 30, 30))
    assert walk(confidence, agrees, alpha=0.05, delta=0.05).threshold == 0.9
    pool = np.repeat(confidence, 10)
    found = walk(confidence, agrees, pool, alpha=0.05, delta=0.05, min_covered=1)
    assert (found.threshold, found.covered) == (0.9, 600)  # 0.95^60 = 0.046: just certified
    # 30 of 30: 0.95^30 = 0.21 is no proof.
    assert walk(confidence[30:], agrees[30:], pool, alpha=0.05, delta=0.05, min_covered=1) is None


def test_thresholds_with_too_few_expected_calibration_pairs_are_skipped_not_failed():
    # 5 disagreeing pairs on top, then 100 agreeing ones: 100 of 105 passes 0.9.
    confidence, agrees = grouped((0.99, 0, 5), (0.9, 100, 0))
    assert walk(confidence, agrees).threshold == 0.9
    # Tested, the top group fails and stops the walk.
    assert walk(confidence, agrees, min_covered=1) is None
    # The rule reads the pool, not the sample: the sample holds all 10 pairs of the top group
    # (10 >= 8), a share of 210 / 1010 of the pool is expected there (2.1 < 8): skipped.
    sample, sample_agrees = grouped((0.99, 0, 10), (0.9, 200, 0))
    pool = np.concatenate([np.full(10, 0.99), np.full(1_000, 0.9)])
    assert walk(sample, sample_agrees, pool, min_covered=8).threshold == 0.9


def test_nothing_passes():
    confidence, agrees = grouped((0.9, 30, 10), (0.6, 30, 30))
    assert walk(confidence, agrees, alpha=0.05, delta=0.05) is None
    assert walk(np.array([]), np.array([], dtype=bool), np.array([0.9])) is None


def test_two_walks_each_at_half_the_level_the_lower_threshold_wins():
    rng = np.random.default_rng(4)
    for _ in range(20):
        pool = rng.uniform(0.5, 1.0, 1_000)
        sample, agrees = pool[:200], rng.random(200) < pool[:200] ** 0.2
        found = certify(sample, agrees, pool=pool, alpha=0.1, delta=0.05)
        start = math.log(0.025) / math.log(0.9)
        walks = [walk(sample, agrees, pool, delta=0.025, min_covered=f * start) for f in (1, 3)]
        thresholds = [w.threshold for w in walks if w]
        assert (found and found.threshold) == (min(thresholds) if thresholds else None)


def test_the_walk_matches_a_walk_through_scipy():
    def reference(sample, agrees, pool, alpha, delta, min_covered):
        chosen = None
        for threshold in sorted(set(pool), reverse=True):
            covered = int((pool >= threshold).sum())
            if covered * len(sample) / len(pool) < min_covered:
                continue
            above = sample >= threshold
            if not certifies(int((~agrees[above]).sum()), covered, int(above.sum()), alpha, delta):
                break
            chosen = (threshold, covered)
        return chosen

    rng = np.random.default_rng(11)
    for _ in range(15):
        pool = np.round(rng.uniform(0.5, 1.0, 400), 2)  # ties included
        sample = pool[:120]
        agrees = rng.random(120) < sample**0.3
        walk = fixed_sequence_threshold(
            sample, agrees, pool=pool, alpha=0.1, delta=0.1, min_covered=10
        )
        expected = reference(sample, agrees, pool, 0.1, 0.1, 10)
        assert (walk and (walk.threshold, walk.covered)) == expected


@pytest.mark.parametrize(
    ("confidence", "agrees", "pool", "alpha", "delta"),
    [
        ([0.9, 0.8], [True], [0.9, 0.8], 0.1, 0.1),
        ([0.9, 0.8], [True, True], [0.9], 0.1, 0.1),
        ([0.9], [True], [0.9], 0.0, 0.1),
        ([0.9], [True], [0.9], 1.0, 0.1),
        ([0.9], [True], [0.9], 0.1, 0.0),
        ([0.9], [True], [0.9], 0.1, 1.0),
        ([float("nan")], [True], [0.9], 0.1, 0.1),
        ([0.9], [2], [0.9], 0.1, 0.1),
    ],
)
def test_the_walk_rejects_bad_inputs(confidence, agrees, pool, alpha, delta):
    with pytest.raises(ValueError):
        walk(confidence, agrees, pool, alpha=alpha, delta=delta, min_covered=1)


# --- checkpoints -----------------------------------------------------------------------------


def test_checkpoints_double_and_spend_delta_once_in_all():
    assert [checkpoint(n) for n in (0, 99, 100, 199, 200, 399, 400, 1_000)] == [
        0, 0, 100, 100, 200, 200, 400, 800,
    ]  # fmt: skip
    sizes = [FIRST_CHECKPOINT * 2**j for j in range(40)]
    assert sum(delta_at(size, 0.1) for size in sizes) == pytest.approx(0.1)
    assert delta_at(100, 0.1) == pytest.approx(0.05)


def test_between_checkpoints_the_calibration_does_not_move():
    """Exporting after every rating looks at the same threshold until the next checkpoint:
    pairs decided since the last one, however they went, change nothing."""
    rng = np.random.default_rng(3)
    confidence = rng.uniform(0.5, 1.0, 1_000)
    agrees = rng.random(1_000) < confidence**0.2
    at_checkpoint = calibrate(confidence, agrees[:200], alpha=0.1, delta=0.1)
    assert at_checkpoint.threshold is not None and at_checkpoint.calibration_pairs == 200
    assert at_checkpoint.delta_spent == pytest.approx(0.025)
    for decided in (201, 250, 399):
        later = agrees[:decided].copy()
        later[200:] = False  # every pair since disagrees
        moved = calibrate(confidence, later, alpha=0.1, delta=0.1)
        assert moved.as_dict() == {**at_checkpoint.as_dict(), "decided_in_draw_order": decided}
    assert calibrate(confidence, agrees[:400], alpha=0.1, delta=0.1).calibration_pairs == 400
    before = calibrate(confidence, agrees[:99], alpha=0.1, delta=0.1)
    assert (before.threshold, before.calibration_pairs, before.next_checkpoint) == (None, 0, 100)


def test_calibration_states_the_pool_bound():
    confidence, agrees = grouped((0.9, 195, 5), (0.6, 100, 100))
    pool = np.concatenate([confidence, confidence])
    result = calibrate(pool, agrees, alpha=0.1, delta=0.2)  # the first 400 by draw are decided
    assert result == Calibration(
        threshold=0.9,
        alpha=0.1,
        delta=0.2,
        delta_spent=pytest.approx(0.025),
        pool_pairs=800,
        decided_in_draw_order=400,
        calibration_pairs=400,
        next_checkpoint=800,
        covered=400,
        coverage=0.5,
        disagreements_at_most=40,
        calibration_covered=200,
        calibration_agreement=0.975,
    )
    # 5 of the 40 allowed are among the decided pairs: 200 labels hold at most 35.
    assert labelled_agreement_at_least(result, 5, 200) == pytest.approx(1 - 35 / 200)
    assert labelled_agreement_at_least(result, 41, 200) is None  # contradicted: no claim
    assert labelled_agreement_at_least(result, 5, 0) is None
    assert labelled_agreement_at_least(result, 0, 30) == 0.0  # nothing worth stating


# --- the guarantee as a lead uses it, simulated ----------------------------------------------
#
# A pool of 2,000 pairs; each has a hidden clarity u, uniform on [0, 1]. The experts drop it
# (span, ambiguity) with probability 0.8 (1 - u)^2 (27 % of the pool, as in MJ-Bench and
# MMRB2); 8 judge trials answer a tie or no side with probability 0.5 (1 - u) and otherwise
# name the experts' side with probability 0.5 + 0.48 u. The judges' confidence then predicts
# their agreement, 95 %+ at the top: the setting in which exporting is the usual outcome.
# The lead rates in draw order and exports after every rating.

POOL, TRIALS, MOST_RATED = 2_000, 8, 1_600


def draw_pool(seed, *, drop=0.8, tie=0.5, slope=0.48):
    rng = np.random.default_rng(seed)
    clarity = rng.random(POOL)
    dropped = rng.random(POOL) < drop * (1 - clarity) ** 2
    truth_a = rng.random(POOL) < 0.5
    sided = TRIALS - rng.binomial(TRIALS, tie * (1 - clarity))
    right = rng.binomial(sided, 0.5 + slope * clarity)
    a = np.where(truth_a, right, sided - right)
    votes = [judge_vote(int(x), int(y), TRIALS) for x, y in zip(a, sided - a, strict=True)]
    side = np.array([s or "" for s, _ in votes])
    # What the judges labelled before: the A/B share as confidence (A on an even split).
    share = np.where(sided > 0, np.maximum(a, sided - a) / np.maximum(sided, 1), np.nan)
    side_before = np.where(2 * a >= sided, "A", "B")
    experts = np.where(truth_a, "A", "B")
    return {
        "confidence": np.array([c for _, c in votes]),
        "agrees": (side == experts) & ~dropped,
        "labelable": side != "",
        "share": share,
        "agrees_before": (side_before == experts) & ~dropped,
        "dropped": dropped,
    }


def margin(rate, runs):
    """Three Monte-Carlo standard errors of a rate measured over `runs` runs."""
    return 3 * math.sqrt(rate * (1 - rate) / runs)


def first_export(pool, order, alpha, delta):
    """A lead who exports after every rating until labels appear: between checkpoints nothing
    moves, so the first labels come at a checkpoint. Whether the statements made then are
    false, or None when no labels come by MOST_RATED rated pairs."""
    confidence, agrees = pool["confidence"][order], pool["agrees"][order]
    size = FIRST_CHECKPOINT
    while size <= MOST_RATED:
        result = calibrate(confidence, agrees[:size], alpha=alpha, delta=delta)
        if result.threshold is not None:
            above = confidence >= result.threshold
            pool_false = (~agrees[above]).sum() > result.disagreements_at_most
            labelled = above & pool["labelable"][order]
            labelled[:size] = False
            shown = int((~agrees[:size][above[:size]]).sum())
            bound = labelled_agreement_at_least(result, shown, int(labelled.sum()))
            if bound:
                return pool_false or agrees[labelled].mean() < bound
        size *= 2
    return None


def as_before(pool, order, alpha, delta):
    """Labels as they were calibrated before: on the kept pairs rated so far only, with the A/B
    share as confidence and Clopper–Pearson bounds, recalibrated at every export, claiming at
    least 1 - alpha of the labels agree. The lead exports after every rating until labels
    appear; whether that claim is then false (None: no labels by MOST_RATED)."""
    share, agrees, dropped = (pool[key][order] for key in ("share", "agrees_before", "dropped"))
    for rated in range(30, MOST_RATED + 1):
        kept = ~dropped[:rated] & ~np.isnan(share[:rated])
        ranked = np.argsort(-share[:rated][kept], kind="stable")
        values, agreeing = share[:rated][kept][ranked], np.cumsum(agrees[:rated][kept][ranked])
        last = np.flatnonzero(np.append(values[1:] != values[:-1], True))
        covered, right = last + 1, agreeing[last]
        bound = np.where(
            right > 0, stats.beta.ppf(delta, np.maximum(right, 1), covered - right + 1), 0
        )
        threshold = None
        for index in np.flatnonzero(covered >= 30):
            if bound[index] < 1 - alpha:
                break
            threshold = values[last[index]]
        if threshold is not None:
            labelled = share >= threshold  # NaN (no A/B vote) never
            labelled[:rated] = False
            return agrees[labelled].mean() < 1 - alpha
    return None


@pytest.fixture(scope="module")
def realistic():
    return draw_pool(1)


@pytest.mark.parametrize("delta", [0.05, 0.1])
def test_the_guarantee_holds_given_that_labels_are_exported(realistic, delta):
    """Many random rating orders of one pool: the lead exports after every rating until the
    judges label something. The statements then made (the pool's bound, and the least share of
    the exported labels that agree) are false in at most delta of the orders that export,
    within three Monte-Carlo standard errors; the labels come in nearly every order."""
    alpha, runs = 0.1, 300
    outcomes = [
        first_export(realistic, np.random.default_rng([round(delta * 100), run]).permutation(POOL),
                     alpha, delta)
        for run in range(runs)
    ]  # fmt: skip
    exported = [failed for failed in outcomes if failed is not None]
    assert len(exported) >= 0.9 * runs
    assert np.mean(exported) <= delta + margin(delta, len(exported))


def test_the_guarantee_as_before_fails_given_export(realistic):
    """The same lead, the labels calibrated as before: the claim "at least 1 - alpha of such
    labels agree" fails in most orders that export (dropped pairs never calibrated against, a
    lone A/B vote among ties taken for certainty, a look at every export)."""
    alpha, delta, runs = 0.1, 0.1, 100
    outcomes = [
        as_before(realistic, np.random.default_rng([9, run]).permutation(POOL), alpha, delta)
        for run in range(runs)
    ]
    exported = [failed for failed in outcomes if failed is not None]
    assert len(exported) >= 0.9 * runs
    assert np.mean(exported) > delta + margin(delta, len(exported))


def ever_false(pool, order, alpha, delta, exports=8):
    """A lead who exports after every rating and never stops, up to MOST_RATED rated pairs:
    whether any statement made is false (at each checkpoint and at `exports` random exports
    between it and the next, where only the labels' bound moves)."""
    rng = np.random.default_rng(order[:4])
    confidence, agrees = pool["confidence"][order], pool["agrees"][order]
    size = FIRST_CHECKPOINT
    while size <= MOST_RATED:
        result = calibrate(confidence, agrees[:size], alpha=alpha, delta=delta)
        if result.threshold is not None:
            above = confidence >= result.threshold
            if (~agrees[above]).sum() > result.disagreements_at_most:
                return True
            for rated in [size, *rng.integers(size, 2 * size, exports)]:
                labelled = above & pool["labelable"][order]
                labelled[:rated] = False
                shown = int((~agrees[:rated][above[:rated]]).sum())
                bound = labelled_agreement_at_least(result, shown, int(labelled.sum()))
                if bound and agrees[labelled].mean() < bound:
                    return True
        size *= 2
    return False


@pytest.mark.parametrize(
    "shape",
    [
        {},  # the realistic pool
        {"drop": 0.0, "tie": 0.0, "slope": 0.40},  # agreement crossing 1 - alpha slowly
        {"drop": 0.8, "tie": 0.5, "slope": 0.30},  # judges barely better than 90 % at the top
    ],
)
def test_no_statement_is_ever_false_however_often_the_lead_exports(shape):
    """However often the lead exports and whenever they stop, every statement made is true
    except in at most delta of the rating orders (within three Monte-Carlo standard errors)."""
    pool, alpha, delta, runs = draw_pool(2, **shape), 0.1, 0.1, 200
    failures = [
        ever_false(pool, np.random.default_rng([5, run]).permutation(POOL), alpha, delta)
        for run in range(runs)
    ]
    assert np.mean(failures) <= delta + margin(delta, runs)
