"""Speed and pattern flags and the gold interval (metrics/annotator_flags.py), on simulated
annotators: honest ones at several noise levels earn no flag; a random clicker, an
always-same-score one, a fast one and a left-leaning one each earn theirs, with evidence."""

import random

import pytest

from metrics.annotator_flags import (
    annotator_flags,
    binomial_two_sided_p,
    longest_run,
    wilson_interval,
)

K = 7


def honest(rng, truth_sides, noise):
    """Shown scores of an expert who sees the better side on the left or right at random and
    presses a strong or weak preference for it, wrong with probability `noise`."""
    rows = []
    for better_is_left in truth_sides:
        picks_left = better_is_left if rng.random() >= noise else not better_is_left
        strength = rng.choice([1, 2, 3])
        score = 4 - strength if picks_left else 4 + strength
        rows.append((score, rng.uniform(8, 60)))
    return rows


@pytest.fixture
def truth():
    rng = random.Random(7)
    return [rng.random() < 0.5 for _ in range(120)]


@pytest.mark.parametrize("noise", [0.05, 0.2, 0.35])
def test_honest_annotators_earn_no_flag(truth, noise):
    rng = random.Random(int(noise * 100))
    assert annotator_flags(honest(rng, truth, noise), K, floor_seconds=3).names == []


def test_each_bad_pattern_earns_its_flag_with_evidence(truth):
    rng = random.Random(11)
    fast = [(score, rng.uniform(0.1, 0.4)) for score, _s in honest(rng, truth, 0.2)]
    same = [(5, 10.0)] * 40 + honest(rng, truth[:20], 0.1)
    left = [(rng.choice([1, 2, 3]) if rng.random() < 0.8 else 6, 12.0) for _ in truth]
    always_left = [(2, 9.0)] * 30
    flags = {
        "fast": annotator_flags(fast, K, 3),
        "same": annotator_flags(same, K, 3),
        "left": annotator_flags(left, K, 3),
        "always_left": annotator_flags(always_left, K, 3),
    }
    assert flags["fast"].names == ["fast"]
    assert "120 of 120 ratings under 3 s" in flags["fast"].flags[0].evidence
    assert "same_score" in flags["same"].names and "same_side" in flags["same"].names
    assert "score 5 given 40 times in a row" in [f.evidence for f in flags["same"].flags]
    assert "left_bias" in flags["left"].names and "fast" not in flags["left"].names
    assert flags["left"].flags[-1].evidence.startswith("Left preferred in")
    assert set(flags["always_left"].names) == {"same_score", "same_side", "left_bias"}


def test_a_few_fast_ratings_or_a_short_run_are_not_flagged():
    rows = [(2, 1.0), (6, 1.0)] + [(s, 20.0) for s in [1, 7, 3, 5, 2, 6] * 3]
    assert annotator_flags(rows, K, 3).names == []  # 2 fast of 20: under the minimum
    assert annotator_flags([], K, 3).ratings == 0


def test_wilson_interval_matches_the_textbook_values():
    # Newcombe (1998), Table I: 81/263 → 0.2553–0.3662; 15/148 → 0.0624–0.1605.
    assert wilson_interval(81, 263) == pytest.approx((0.2553, 0.3662), abs=5e-5)
    assert wilson_interval(15, 148) == pytest.approx((0.0624, 0.1605), abs=5e-5)
    low, high = wilson_interval(0, 5)
    assert low == 0 and high == pytest.approx(0.4345, abs=5e-5)
    assert wilson_interval(0, 0) is None


def test_binomial_p_and_runs():
    assert binomial_two_sided_p(10, 10) == pytest.approx(2 / 1024)
    assert binomial_two_sided_p(5, 10) == 1.0
    assert binomial_two_sided_p(0, 0) == 1.0
    assert longest_run([1, 1, None, 1, 2, 2, 2]) == (3, 2)
    assert longest_run([]) == (0, None)
