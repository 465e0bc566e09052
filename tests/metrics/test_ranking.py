"""metrics.ranking: win rates and Bradley–Terry scores against hand-solved cases."""

import math
import random

import pytest

from metrics.ranking import bradley_terry, bradley_terry_intervals, games, win_rates


def test_games_skip_non_games():
    rows = [("x", "y", "A"), ("x", "y", "B"), ("x", "x", "A"), ("y", "z", "tie"), ("y", "z", None)]
    # Label A -> generator_a won; B -> generator_b won; self-play and unlabelled rows dropped.
    assert games(rows) == [("x", "y"), ("y", "x")]


def test_win_rates_by_hand():
    rows = [
        ("x", "y", "A"),  # x beats y
        ("x", "y", "B"),  # y beats x
        ("y", "z", "A"),  # y beats z
        ("x", "z", "A"),  # x beats z
        ("x", "x", "A"),  # self-play: not a game
        ("y", "z", "tie"),  # no label: not a game
    ]
    # x: 2 wins of 3; y: 2 of 3; z: 0 of 2.
    assert win_rates(rows) == {"x": (2, 3, 2 / 3), "y": (2, 3, 2 / 3), "z": (0, 2, 0.0)}
    assert win_rates([]) == {}


def test_bradley_terry_two_players_without_prior_by_hand():
    # A beats B 3 times of 4. ML: p_A / (p_A + p_B) = 3/4 -> p_A / p_B = 3, so the log-strength
    # difference is ln 3, centred to +-ln(3)/2.
    rows = [("A", "B", "A")] * 3 + [("A", "B", "B")]
    scores = bradley_terry(rows, prior=0)
    assert scores["A"] - scores["B"] == pytest.approx(math.log(3), abs=1e-9)
    assert scores == pytest.approx({"A": math.log(3) / 2, "B": -math.log(3) / 2}, abs=1e-9)
    # Side does not matter: the same games written with B as generator_a.
    flipped = [("B", "A", "B")] * 3 + [("B", "A", "A")]
    assert bradley_terry(flipped, prior=0) == pytest.approx(scores, abs=1e-9)


def test_bradley_terry_weak_prior_shrinks_slightly_towards_zero():
    rows = [("A", "B", "A")] * 3 + [("A", "B", "B")]
    weak = bradley_terry(rows, prior=0.01)
    difference = weak["A"] - weak["B"]
    assert difference == pytest.approx(math.log(3), abs=0.01)
    assert difference < math.log(3)  # the virtual draws pull towards equal strengths
    strong = bradley_terry(rows, prior=5)
    assert 0 < strong["A"] - strong["B"] < difference


def test_bradley_terry_three_players_exact_solution():
    # Strengths 4 : 2 : 1 give P(A>B) = 2/3, P(A>C) = 4/5, P(B>C) = 2/3. Games matching those
    # exactly (A-B 2:1, A-C 4:1, B-C 2:1) make the likelihood equations hold at 4 : 2 : 1
    # (W_A = 6 = 3*2/3 + 5*4/5, W_B = 3 = 3*1/3 + 3*2/3, W_C = 2 = 3*1/3 + 5*1/5).
    # Log-strengths ln 4, ln 2, 0, centred (mean ln 2): ln 2, 0, -ln 2.
    rows = (
        [("A", "B", "A")] * 2
        + [("A", "B", "B")]
        + [("A", "C", "A")] * 4
        + [("A", "C", "B")]
        + [("B", "C", "A")] * 2
        + [("B", "C", "B")]
    )
    scores = bradley_terry(rows, prior=0)
    assert scores == pytest.approx({"A": math.log(2), "B": 0.0, "C": -math.log(2)}, abs=1e-8)


def test_bradley_terry_undefeated_is_finite_with_prior_by_hand():
    # A beats B once; prior 1 = one virtual win and one virtual loss each against a reference R.
    # By symmetry p_R = 1, p_A = x, p_B = 1/x. A's equation: wins 2 = x/(x + 1/x) + 2x/(x + 1),
    # i.e. x^2/(x^2 + 1) + 2x/(x + 1) = 2  <=>  x^3 - x^2 - 2 = 0 (x ~ 1.6956).
    scores = bradley_terry([("A", "B", "A")], prior=1)
    x = math.exp(scores["A"])
    assert x**3 - x**2 == pytest.approx(2, abs=1e-7)
    assert scores["B"] == pytest.approx(-scores["A"])
    assert math.isfinite(scores["A"]) and math.isfinite(scores["B"])


def test_bradley_terry_without_prior_refuses_undefeated():
    with pytest.raises(ValueError):
        bradley_terry([("A", "B", "A")], prior=0)


def test_bradley_terry_transitive_and_centred():
    # A beats B 3:1, B beats C 3:1, A beats C 4:0 (undefeated against C): A > B > C.
    rows = (
        [("A", "B", "A")] * 3
        + [("B", "A", "A")]
        + [("B", "C", "A")] * 3
        + [("C", "B", "A")]
        + [("C", "A", "B")] * 4
    )
    scores = bradley_terry(rows)
    assert scores["A"] > scores["B"] > scores["C"]
    assert sum(scores.values()) == pytest.approx(0, abs=1e-9)
    assert list(scores) == ["A", "B", "C"]
    assert bradley_terry([]) == {}


def test_bradley_terry_recovers_simulated_strengths():
    rng = random.Random(0)
    truth = {f"g{i}": 0.4 * i for i in range(5)}
    rows = []
    for _ in range(4000):
        a, b = rng.sample(sorted(truth), 2)
        p_a = 1 / (1 + math.exp(truth[b] - truth[a]))
        rows.append((a, b, "A" if rng.random() < p_a else "B"))
    scores = bradley_terry(rows)
    centre = sum(truth.values()) / len(truth)
    for name, value in truth.items():
        assert scores[name] == pytest.approx(value - centre, abs=0.15)


def _tournament(seed=0, games_count=300):
    rng = random.Random(seed)
    truth = {"a": 1.0, "b": 0.3, "c": 0.0, "d": -0.8}
    rows = []
    for _ in range(games_count):
        x, y = rng.sample(sorted(truth), 2)
        rows.append((x, y, "A" if rng.random() < 1 / (1 + math.exp(truth[y] - truth[x])) else "B"))
    return rows


def test_bradley_terry_intervals_reproducible_and_contain_the_estimate():
    rows = _tournament()
    intervals = bradley_terry_intervals(rows, seed=3)
    assert intervals == bradley_terry_intervals(rows, seed=3)
    assert intervals != bradley_terry_intervals(rows, seed=4)
    scores = bradley_terry(rows)
    assert list(intervals) == ["a", "b", "c", "d"]
    for name, (low, high) in intervals.items():
        assert low < scores[name] < high
        assert high - low < 1.5  # ~75 games each: a standard error of roughly 0.2-0.3
    # The best and the worst generator are told apart.
    assert intervals["d"][1] < intervals["a"][0]


def test_bradley_terry_intervals_default_resamples_is_200():
    rows = _tournament(games_count=60)
    assert bradley_terry_intervals(rows) == bradley_terry_intervals(rows, 200, 0)
    assert bradley_terry_intervals(rows) != bradley_terry_intervals(rows, 199, 0)


def test_bradley_terry_intervals_small_cases():
    # Fewer than 2 games: no interval, but every generator is listed.
    assert bradley_terry_intervals([("x", "y", "A")]) == {"x": None, "y": None}
    assert bradley_terry_intervals([]) == {}
    # Two players, two games x > y: every resample has x winning all its games, so x's score is
    # the same positive number each time -> a point interval, y its mirror.
    intervals = bradley_terry_intervals([("x", "y", "A"), ("y", "x", "B")], resamples=20)
    assert intervals["x"][0] == pytest.approx(intervals["x"][1])
    assert intervals["x"][0] > 0 and intervals["y"][1] == pytest.approx(-intervals["x"][0])


def test_bradley_terry_intervals_skip_undefined_resamples_without_prior_by_hand():
    # A beats B 3 times of 4, prior 0. A resample of the 4 games holds k of the B wins:
    # k = 0 (p (3/4)^4 = 0.32) or k = 4 leave a generator without a loss or a win: skipped.
    # Else A's centred score is ln(3)/2 (k = 1, p 0.42), 0 (k = 2, p 0.21) or -ln(3)/2
    # (k = 3, p 0.047). Among defined resamples k = 3 is ~6.9 % and k = 1 ~62 %, so the 2.5th
    # percentile is -ln(3)/2 and the 97.5th ln(3)/2; no infinite score enters.
    rows = [("A", "B", "A")] * 3 + [("A", "B", "B")]
    half = math.log(3) / 2
    intervals = bradley_terry_intervals(rows, prior=0)
    assert intervals["A"] == pytest.approx((-half, half), abs=1e-8)
    assert intervals["B"] == pytest.approx((-half, half), abs=1e-8)


def test_the_batched_newton_fit_equals_the_mm_fit():
    import numpy as np

    from metrics.ranking import _fit, _fit_newton

    rng = np.random.default_rng(5)
    matrices = rng.integers(0, 6, size=(4, 5, 5)).astype(float)
    for matrix in matrices:
        np.fill_diagonal(matrix, 0)
    newton = _fit_newton(matrices, 0.5)
    for matrix, scores in zip(matrices, newton, strict=True):
        expected = _fit(matrix, 0.5, 100_000, 1e-12)
        assert np.allclose(scores - scores.mean(), expected, atol=1e-7)
