"""metrics.annotators: per-annotator figures on a small hand-worked data set (K = 7, centre 4)."""

from datetime import datetime, timedelta

import pytest

from metrics.annotators import (
    AnnotatorStats,
    annotator_stats,
    left_side_bias,
    loo_agreement,
    others_sides,
)

CENTER = 4.0
T0 = datetime(2025, 1, 1, 9, 0)


def at(minutes):
    return T0 + timedelta(minutes=minutes)


# (annotator, pair, overall, active_seconds, swapped, created_at)
ROWS = [
    ("ann1", 1, 6, 10.0, False, at(1)),
    ("ann2", 1, 5, 5.0, True, at(2)),
    ("ann3", 1, 2, 12.0, False, at(3)),
    ("ann1", 2, 3, 20.0, True, at(4)),
    ("ann2", 2, 2, 15.0, False, at(5)),
    ("ann1", 3, 4, 30.0, False, at(6)),
    ("ann2", 3, 6, 40.0, True, at(7)),
    ("ann1", 4, 7, None, False, at(8)),
]
LABELS = {1: "A", 2: "B", 3: "A"}  # pair 4 has no label


def test_others_sides_by_hand():
    # Pair 1 (6, 5, 2): for ann1 the others sum 5 + 2 = 7 < 4 * 2 -> B; for ann2 6 + 2 = 8 =
    # 4 * 2 -> at the centre, None; for ann3 6 + 5 = 11 > 8 -> A.
    # Pair 2 (3, 2): others of ann1 = 2 -> B; of ann2 = 3 -> B.
    # Pair 3 (4, 6): others of ann1 = 6 -> A; of ann2 = 4 -> centre, None. Pair 4: nobody else.
    assert others_sides(ROWS, CENTER) == ["B", None, "A", "B", "B", "A", None, None]


def test_others_sides_leave_the_whole_annotator_out():
    # ann1 rated pair 9 twice and nobody else did: no reference for either rating.
    rows = [("ann1", 9, 6, 1.0, False, at(1)), ("ann1", 9, 2, 1.0, False, at(2))]
    assert others_sides(rows, CENTER) == [None, None]


def test_loo_agreement_helper():
    # Scores 6, 3, 4 against references B, B, A (and 7 with no reference):
    # 6 -> A != B, 3 -> B == B, 4 -> centre matches nothing: 1 of 3.
    assert loo_agreement([6, 3, 4, 7], ["B", "B", "A", None], CENTER) == (1 / 3, 3)
    assert loo_agreement([6], [None], CENTER) == (None, 0)


def test_left_side_bias_helper():
    # (score 6, not swapped) A on the left preferred -> left; (2, swapped) B is on the left and
    # preferred -> left; (6, swapped) A on the right -> right; (4, ...) centre, left out.
    rows = [
        ("a", 1, 6, None, False, at(0)),
        ("a", 2, 2, None, True, at(1)),
        ("a", 3, 6, None, True, at(2)),
        ("a", 4, 4, None, False, at(3)),
    ]
    assert left_side_bias(rows, CENTER) == (2 / 3, 3)
    assert left_side_bias(rows[3:], CENTER) == (None, 0)


def test_annotator_stats_ann1_by_hand():
    stats = annotator_stats(ROWS, LABELS, CENTER)["ann1"]
    assert isinstance(stats, AnnotatorStats)
    assert stats.ratings == 4
    # Active seconds 10, 20, 30 (None left out): median 20.
    assert stats.median_active_seconds == 20.0
    # Labelled ratings: pair 1 (6 -> A, label A) yes, pair 2 (3 -> B, label B) yes, pair 3 (4,
    # centre) no: 2 of 3. Pair 4 is unlabelled.
    assert stats.label_agreement == pytest.approx(2 / 3)
    assert stats.labelled == 3
    # Leave-one-out: pair 1 A vs B no, pair 2 B vs B yes, pair 3 centre vs A no, pair 4 no
    # reference: 1 of 3.
    assert stats.loo_agreement == pytest.approx(1 / 3)
    assert stats.compared == 3
    # Off-centre: 6 unswapped (left), 3 swapped (B on the left, left), 7 unswapped (left): 3/3.
    assert stats.left_bias == 1.0
    assert stats.decisive == 3


def test_annotator_stats_ann2_and_ann3_by_hand():
    result = annotator_stats(ROWS, LABELS, CENTER)
    assert list(result) == ["ann1", "ann2", "ann3"]
    ann2 = result["ann2"]
    # Times 5, 15, 40 -> 15. Labels: 5 -> A ok, 2 -> B ok, 6 -> A ok: 3/3.
    assert (ann2.ratings, ann2.median_active_seconds, ann2.label_agreement) == (3, 15.0, 1.0)
    # Only pair 2 has a reference off the centre (B), and 2 -> B matches: 1 of 1.
    assert (ann2.loo_agreement, ann2.compared) == (1.0, 1)
    # 5 swapped (A on the right), 2 unswapped (B on the right), 6 swapped (right): 0 of 3.
    assert (ann2.left_bias, ann2.decisive) == (0.0, 3)
    ann3 = result["ann3"]
    # Single rating 2 (B) on pair 1: label A -> 0; others' mean 5.5 -> A -> 0; unswapped, B on
    # the right -> 0.
    assert (ann3.median_active_seconds, ann3.label_agreement, ann3.loo_agreement) == (12.0, 0, 0)
    assert (ann3.left_bias, ann3.decisive) == (0.0, 1)


def test_annotator_without_any_figure():
    # A lone rating at the centre on an unlabelled pair: every share is undefined.
    stats = annotator_stats([("solo", 1, 4, None, False, at(0))], {}, CENTER)["solo"]
    assert stats.ratings == 1
    assert stats.median_active_seconds is None
    assert (stats.label_agreement, stats.labelled) == (None, 0)
    assert (stats.loo_agreement, stats.compared) == (None, 0)
    assert (stats.left_bias, stats.decisive) == (None, 0)


def test_trend_windows_follow_time_order():
    # "ref" rates pairs 1..5 with 6 (A). "x" rates them, at minutes 1..5: 6, 5, 2, 1, 7 ->
    # match, match, miss, miss, match. Rows are given out of time order on purpose.
    reference = [("ref", p, 6, 1.0, False, at(0)) for p in range(1, 6)]
    x_scores = {1: 6, 2: 5, 3: 2, 4: 1, 5: 7}
    x_rows = [("x", p, x_scores[p], 1.0, False, at(p)) for p in (4, 2, 5, 1, 3)]
    trend = annotator_stats(reference + x_rows, {}, CENTER, window=2)["x"].trend
    # Windows of 2: [1, 2] -> 2/2, [3, 4] -> 0/2, [5] -> 1/1.
    assert [(w.index, w.ratings, w.compared, w.agreement) for w in trend] == [
        (0, 2, 2, 1.0),
        (1, 2, 2, 0.0),
        (2, 1, 1, 1.0),
    ]
    assert [(w.first_at, w.last_at) for w in trend] == [
        (at(1), at(2)),
        (at(3), at(4)),
        (at(5), at(5)),
    ]
    # Default window 20: one window holding all five, 3 of 5.
    (whole,) = annotator_stats(reference + x_rows, {}, CENTER)["x"].trend
    assert (whole.ratings, whole.compared, whole.agreement) == (5, 5, 0.6)


def test_trend_window_without_reference_is_none():
    rows = [("x", 1, 6, 1.0, False, at(1)), ("x", 2, 6, 1.0, False, at(2))]
    (window,) = annotator_stats(rows, {}, CENTER)["x"].trend
    assert (window.ratings, window.compared, window.agreement) == (2, 0, None)
    with pytest.raises(ValueError):
        annotator_stats(rows, {}, CENTER, window=0)


def test_as_dict_is_plain_and_nested():
    data = annotator_stats(ROWS, LABELS, CENTER, window=3)["ann1"].as_dict()
    assert data["annotator_id"] == "ann1"
    assert data["ratings"] == 4
    assert data["loo_agreement"] == pytest.approx(1 / 3)
    # 4 ratings in windows of 3: [pairs 1, 2, 3] -> 1 of 3 compared; [pair 4] -> no reference.
    assert [w["agreement"] for w in data["trend"]] == [pytest.approx(1 / 3), None]
    assert data["trend"][0]["first_at"] == at(1)


def test_centre_between_points_for_even_k():
    # K = 6, centre 3.5: others' means can never sit at the centre with one other rating.
    # Pair 1: a = 4 (A), b = 3 (B): each disagrees with the other -> 0 of 1 each.
    rows = [("a", 1, 4, None, False, at(0)), ("b", 1, 3, None, False, at(1))]
    result = annotator_stats(rows, {1: "A"}, 3.5)
    assert (result["a"].loo_agreement, result["a"].label_agreement) == (0.0, 1.0)
    assert (result["b"].loo_agreement, result["b"].label_agreement) == (0.0, 0.0)
