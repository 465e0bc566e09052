"""The metric functions (docs/architecture.md §5.5 and §6) against values computed by hand on
small data."""

import json
import random
from fractions import Fraction
from itertools import permutations

import pytest

from annotation.models import Adjudication
from annotation.services.consensus import consensus_of, decision_set
from content.models import Pair
from metrics.agreement import krippendorff_alpha, rater_label_agreement, unanimous_direction
from metrics.judge_accuracy import average_accuracy, judge_task_stats
from projects.models import Project
from tests.conftest import SHARED_MMRB2

SHARED = SHARED_MMRB2.parent  # ../shared/datasets


def brute_force_alpha(units, scale, level):
    """Krippendorff's alpha straight from the definition, in exact fractions.

    Coincidences: every ordered pair of values (c, k) from two different coders of a unit with
    m_u >= 2 values adds 1 / (m_u - 1) to o_ck; n_c = sum_k o_ck, n = sum_c n_c.
    alpha = 1 - (n - 1) * sum_ck o_ck d_ck / sum_ck n_c n_k d_ck with
    interval d_ck = (c - k)^2 and ordinal d_ck = (sum_{g=c..k} n_g - (n_c + n_k) / 2)^2.
    """
    units = [unit for unit in units if len(unit) >= 2]
    o: dict = {}
    for unit in units:
        weight = Fraction(1, len(unit) - 1)
        for i, j in permutations(range(len(unit)), 2):
            o[unit[i], unit[j]] = o.get((unit[i], unit[j]), 0) + weight
    values = range(1, scale + 1)
    n_c = {c: sum((v for (a, _), v in o.items() if a == c), Fraction(0)) for c in values}
    n = sum(n_c.values())

    def delta(c, k):
        if level == "interval":
            return Fraction((c - k) ** 2)
        low, high = min(c, k), max(c, k)
        return (sum(n_c[g] for g in range(low, high + 1)) - (n_c[c] + n_c[k]) / 2) ** 2

    observed = sum(v * delta(c, k) for (c, k), v in o.items())
    expected = sum(n_c[c] * n_c[k] * delta(c, k) for c in values for k in values)
    return 1 - (n - 1) * observed / expected


# ---------------------------------------------------------------- Krippendorff's alpha

# Units [[1, 2], [2, 2], [3, 3]] (two coders). Coincidences (weight 1/(2-1) = 1):
#   o_12 = o_21 = 1, o_22 = 2, o_33 = 2  ->  n_1 = 1, n_2 = 3, n_3 = 2, n = 6.
# Interval: sum o_ck d_ck = 1*1 + 1*1 = 2;
#   sum n_c n_k d_ck = 2 * (n1 n2 * 1 + n1 n3 * 4 + n2 n3 * 1) = 2 * (3 + 8 + 6) = 34;
#   alpha = 1 - 5 * 2 / 34 = 12/17.
# Ordinal: d_12 = (1 + 3 - 2)^2 = 4, d_13 = (1 + 3 + 2 - 1.5)^2 = 20.25, d_23 = (5 - 2.5)^2 = 6.25;
#   sum o d = 2 * 4 = 8; sum n n d = 2 * (3 * 4 + 2 * 20.25 + 6 * 6.25) = 180;
#   alpha = 1 - 5 * 8 / 180 = 7/9.
SIMPLE_UNITS = [[1, 2], [2, 2], [3, 3]]


def test_alpha_interval_by_hand():
    assert krippendorff_alpha(SIMPLE_UNITS, 7, "interval") == pytest.approx(12 / 17)


def test_alpha_ordinal_by_hand():
    assert krippendorff_alpha(SIMPLE_UNITS, 7, "ordinal") == pytest.approx(7 / 9)


def test_brute_force_reference_matches_the_hand_computation():
    assert brute_force_alpha(SIMPLE_UNITS, 7, "interval") == Fraction(12, 17)
    assert brute_force_alpha(SIMPLE_UNITS, 7, "ordinal") == Fraction(7, 9)


def test_alpha_three_coders_by_hand():
    # [[6, 7, 6], [1, 2, 2], [3, 4, 5], [6, 6]]: weights 1/2 for the 3-value units, 1 for [6, 6].
    # n_1..n_7 = 1, 2, 1, 1, 1, 4, 1 (n = 11). Interval sum o d: [6,7,6] -> 4 * 1/2 = 2,
    # [1,2,2] -> 2, [3,4,5] -> (1+1+4+4+1+1)/2 = 6, [6,6] -> 0: total 10.
    # sum n n d = 936  ->  alpha = 1 - 10 * 10 / 936 = 209/234.
    units = [[6, 7, 6], [1, 2, 2], [3, 4, 5], [6, 6]]
    assert krippendorff_alpha(units, 7, "interval") == pytest.approx(209 / 234)
    assert brute_force_alpha(units, 7, "interval") == Fraction(209, 234)
    assert krippendorff_alpha(units, 7, "ordinal") == pytest.approx(
        float(brute_force_alpha(units, 7, "ordinal"))
    )


@pytest.mark.parametrize("level", ["ordinal", "interval"])
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_alpha_matches_brute_force_on_ragged_data(level, seed):
    rng = random.Random(seed)
    # 12 units, 1..3 coders each (units with a single score are not pairable), scale 1..5
    units = [[rng.randint(1, 5) for _ in range(rng.randint(1, 3))] for _ in range(12)]
    expected = float(brute_force_alpha(units, 5, level))
    assert krippendorff_alpha(units, 5, level) == pytest.approx(expected, abs=1e-9)


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_single_value_is_none(level):
    assert krippendorff_alpha([[4, 4], [4, 4, 4]], 7, level) is None
    # the unpairable [6] does not count as a second value
    assert krippendorff_alpha([[4, 4], [6]], 7, level) is None


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_no_pairable_unit_is_none(level):
    assert krippendorff_alpha([[1], [5], [7]], 7, level) is None


@pytest.mark.parametrize("level", ["ordinal", "interval"])
def test_alpha_empty_is_none(level):
    assert krippendorff_alpha([], 7, level) is None
    assert krippendorff_alpha(iter([]), 7, level) is None


def test_alpha_perfect_agreement_is_one():
    assert krippendorff_alpha([[1, 1], [7, 7], [3, 3, 3]], 7, "interval") == pytest.approx(1.0)


# ---------------------------------------------------------------- unanimous_direction


def test_unanimous_direction():
    # K = 7, centre 4, N = 3
    units = [
        [5, 6, 7],  # all A: unanimous
        [4, 4, 4],  # all at the centre: unanimous
        [1, 2, 3],  # all B: unanimous
        [4, 5, 6],  # centre + A: not unanimous
        [1, 2, 7],  # B + A: not unanimous
        [7, 7],  # only 2 ratings: not complete, left out
        [1],  # left out
    ]
    assert unanimous_direction(units, 4.0, 3) == pytest.approx(3 / 5)


def test_unanimous_direction_k6_centre_between_points():
    # K = 6, centre 3.5: 3 is B, 4 is A
    assert unanimous_direction([[3, 3, 1], [4, 3, 4]], 3.5, 3) == pytest.approx(1 / 2)


def test_unanimous_direction_without_complete_pairs_is_none():
    assert unanimous_direction([[7, 7], [1]], 4.0, 3) is None
    assert unanimous_direction([], 4.0, 3) is None


# ---------------------------------------------------------------- rater_label_agreement


def test_rater_label_agreement():
    scores = {
        1: [5, 6, 4],  # label A: 5 and 6 match, 4 (centre) matches nothing -> 2 of 3
        2: [1, 2, 5],  # label B: 1 and 2 match -> 2 of 3
        3: [7, 7, 7],  # label "" (unlabelled): left out
        4: [1, 1, 1],  # no label at all: left out
    }
    labels = {1: "A", 2: "B", 3: ""}
    # 4 matches of 6 counted ratings
    assert rater_label_agreement(scores, labels, 4.0) == pytest.approx(4 / 6)


def test_rater_label_agreement_centre_only_matches_nothing():
    assert rater_label_agreement({1: [4, 4]}, {1: "A"}, 4.0) == 0.0


def test_rater_label_agreement_without_labelled_pairs_is_none():
    assert rater_label_agreement({1: [5, 6]}, {1: ""}, 4.0) is None
    assert rater_label_agreement({}, {}, 4.0) is None


# ---------------------------------------------------------------- judge accuracy


def test_judge_task_stats_mmrb2_protocol():
    labels = {1: "A", 2: "B", 3: "A", 4: "B"}  # pair 4 never judged: 2 missing trials
    verdicts = [
        (1, "forward", 0, "A"),  # correct
        (1, "reverse", 0, "A"),  # correct (canonical), consistent with forward
        (2, "forward", 0, "tie"),  # wrong, a tie
        (2, "reverse", 0, None),  # failed call: missing, not in the denominator
        (3, "forward", 0, "invalid"),  # wrong, invalid
        (3, "reverse", 0, "B"),  # wrong
        (99, "forward", 0, "A"),  # pair not evaluated (no label): ignored
        (99, "reverse", 0, "B"),
    ]
    stats = judge_task_stats(verdicts, labels, samples=1)
    # evaluated = 5 trials, correct = 2 -> 0.4; expected trials 4 * 2 = 8 -> missing 3
    assert stats.evaluated == 5
    assert stats.correct == 2
    assert stats.accuracy == pytest.approx(0.4)
    assert stats.missing == 3
    assert stats.ties == 1
    assert stats.invalid == 1
    # without ties: 2 correct of 4 decisive trials
    assert stats.accuracy_without_ties == pytest.approx(0.5)
    # MJ-Bench's way also drops the invalid answer: 2 correct of 3 trials that name a side
    assert stats.accuracy_without_ties_mjbench == pytest.approx(2 / 3)
    # trials with both orders: pair 1 (A, A) consistent, pair 3 (invalid, B) not; pair 2's
    # reverse failed so it has no pair of orders
    assert stats.consistent_pairs == 2
    assert stats.position_consistency == pytest.approx(0.5)
    assert stats.as_dict()["correct"] == 2


def test_judge_task_stats_invalid_in_both_orders_is_not_consistent():
    stats = judge_task_stats(
        [(1, "forward", 0, "invalid"), (1, "reverse", 0, "invalid")], {1: "A"}, samples=1
    )
    assert stats.position_consistency == 0.0
    assert stats.accuracy == 0.0
    assert stats.invalid == 2


def test_judge_task_stats_never_judged():
    stats = judge_task_stats([], {1: "A", 2: "B"}, samples=1)
    assert stats.evaluated == 0
    assert stats.missing == 4
    assert stats.accuracy is None
    assert stats.position_consistency is None
    assert stats.accuracy_without_ties is None


def test_judge_task_stats_only_failed_calls():
    stats = judge_task_stats([(1, "forward", 0, None), (1, "reverse", 0, None)], {1: "A"}, 1)
    assert (stats.evaluated, stats.missing, stats.accuracy) == (0, 2, None)


def test_judge_task_stats_several_samples():
    # samples = 3: expected trials 1 pair * 2 orders * 3 samples = 6
    verdicts = [
        (1, "forward", 0, "A"),
        (1, "forward", 1, "A"),
        (1, "forward", 2, "B"),
        (1, "reverse", 0, "A"),
    ]
    stats = judge_task_stats(verdicts, {1: "A"}, samples=3)
    assert stats.evaluated == 4
    assert stats.correct == 3
    assert stats.accuracy == pytest.approx(0.75)
    assert stats.missing == 2
    # only sample 0 has both orders: (A, A) consistent
    assert stats.consistent_pairs == 1
    assert stats.position_consistency == 1.0


def test_judge_task_stats_all_ties():
    stats = judge_task_stats([(1, "forward", 0, "tie"), (1, "reverse", 0, "tie")], {1: "B"}, 1)
    assert stats.accuracy == 0.0
    assert stats.ties == 2
    assert stats.accuracy_without_ties is None


def test_average_accuracy():
    assert average_accuracy([0.5, 1.0]) == pytest.approx(0.75)
    assert average_accuracy([0.5, None, 1.0]) is None  # a task without a figure: no average
    assert average_accuracy([None, None]) is None
    assert average_accuracy([]) is None
    assert average_accuracy([0.0]) == 0.0


# ------------------------------------------------- consensus (docs/architecture.md §5.5)


def _project(**kwargs):
    return Project(slug="p", name="p", **kwargs)


@pytest.mark.parametrize(
    ("scores", "label", "keep"),
    [
        ([3, 3, 4], "B", False),  # mean 3.33 in [3, 4]: ambiguous
        ([4, 4, 4], "A", False),  # mean 4 on the band's upper edge: dropped (inclusive)
        ([3, 3, 3], "B", False),  # mean 3 on the lower edge: dropped
        ([2, 2, 6], "B", False),  # mean 3.33: ambiguous
        ([1, 6, 6], "A", False),  # mean 4.33 but span 5 > 4: dropped
        ([2, 6, 6], "A", True),  # mean 4.67, span 4 = max span: kept
        ([5, 5, 6], "A", True),  # mean 5.33, span 1
        ([1, 2, 2], "B", True),  # mean 1.67, span 1
    ],
)
def test_consensus_mmrb2_k6(scores, label, keep):
    project = _project(scale_points=6)  # centre 3.5, band [3, 4], max span 4
    consensus = consensus_of(scores, project)
    assert consensus.label == label
    assert consensus.keep is keep
    assert consensus.mean == pytest.approx(sum(scores) / 3)
    assert consensus.span == max(scores) - min(scores)


@pytest.mark.parametrize(
    ("scores", "label", "keep"),
    [
        ([3, 4, 4], "B", False),  # mean 3.67 in [3.5, 4.5]
        ([4, 4, 5], "A", False),  # mean 4.33
        ([4, 5], "A", False),  # mean 4.5 on the edge: dropped
        ([3, 4], "B", False),  # mean 3.5 on the edge: dropped
        ([4, 4, 4], "", False),  # mean at the centre
        ([4, 5, 5], "A", True),  # mean 4.67
        ([3, 3, 4], "B", True),  # mean 3.33
        ([1, 7, 7], "A", False),  # span 6
        ([3, 7, 7], "A", True),  # span 4, mean 5.67
    ],
)
def test_consensus_k7(scores, label, keep):
    project = _project(scale_points=7)  # centre 4, band [3.5, 4.5]
    consensus = consensus_of(scores, project)
    assert (consensus.label, consensus.keep) == (label, keep)


def test_consensus_respects_project_max_span_and_band():
    project = _project(scale_points=7, max_span=1, ambiguous_half_width=0)
    assert consensus_of([5, 6, 7], project).keep is False  # span 2 > 1
    assert consensus_of([4, 4, 5], project).keep is True  # mean 4.33 outside centre ± 0
    assert consensus_of([4, 4, 4], project).keep is False


# ---------------------------------------------------------------- decision_set precedence


def _pair(reference_label="", status=Pair.Status.QUEUED):
    return Pair(external_id="x", reference_label=reference_label, status=status)


def test_pair_decide_adjudication_wins_over_consensus():
    project = _project(scale_points=7, annotators_per_pair=3)
    pair = _pair(reference_label="A")
    decision_set(pair, [7, 7, 7], Adjudication(decision="keep_b"), project)
    assert (pair.label, pair.status, pair.decided_by) == ("B", "kept", "adjudication")
    assert pair.rating_count == 3
    assert pair.consensus_mean == pytest.approx(7)
    assert pair.consensus_span == 0


def test_pair_decide_adjudication_drop_and_keep_a():
    project = _project(scale_points=7, annotators_per_pair=3)
    pair = _pair()
    decision_set(pair, [6, 6, 7], Adjudication(decision="drop"), project)
    assert (pair.label, pair.status, pair.decided_by) == ("", "dropped", "adjudication")
    pair = _pair()
    decision_set(pair, [], Adjudication(decision="keep_a"), project)  # even without ratings
    assert (pair.label, pair.status, pair.decided_by) == ("A", "kept", "adjudication")
    assert pair.rating_count == 0
    assert pair.consensus_mean is None
    assert pair.consensus_span is None


def test_pair_decide_consensus_wins_over_reference_label():
    project = _project(scale_points=7, annotators_per_pair=3)
    pair = _pair(reference_label="B")
    decision_set(pair, [6, 7, 6], None, project)
    assert (pair.label, pair.status, pair.decided_by) == ("A", "kept", "consensus")
    assert pair.consensus_mean == pytest.approx(19 / 3)
    assert pair.consensus_span == 1
    pair = _pair(reference_label="B")
    decision_set(pair, [3, 4, 5], None, project)  # ambiguous: dropped, label from the mean
    assert (pair.label, pair.status, pair.decided_by) == ("", "dropped", "consensus")


def test_pair_decide_reference_label_when_ratings_are_missing():
    project = _project(scale_points=7, annotators_per_pair=3)
    pair = _pair(reference_label="B")
    decision_set(pair, [7, 7], None, project)  # 2 < N ratings: the consensus does not decide
    assert (pair.label, pair.decided_by) == ("B", "imported")
    assert pair.status == "queued"  # status untouched
    assert pair.rating_count == 2
    pair = _pair(reference_label="tie")
    decision_set(pair, [], None, project)
    assert (pair.label, pair.decided_by) == ("", "imported")


def test_pair_decide_nothing_to_decide():
    project = _project(scale_points=7, annotators_per_pair=3)
    pair = _pair()
    decision_set(pair, [5], None, project)
    assert (pair.label, pair.decided_by, pair.status) == ("", "", "queued")


MJBENCH_RESULTS = SHARED / "mjbench" / "personal" / "result"


def mjbench_test_py_accuracy(rows) -> float:
    """MJ-Bench's personal/test.py, its "filter tie Accuracy", restated line for line."""

    def get_pred(pred):
        return 0 if pred == "0" else 1 if pred == "1" else 0.5

    sum_all = sum_valid = 0
    for row in rows:
        human, pick = get_pred(row["label"]), get_pred(row["pred"])
        if human == 0.5 or pick == 0.5:
            continue
        sum_all += 1
        sum_valid += human == pick
    return sum_valid / sum_all


@pytest.mark.skipif(not MJBENCH_RESULTS.is_dir(), reason="MJ-Bench files not in ../shared")
@pytest.mark.parametrize(
    "path", sorted(MJBENCH_RESULTS.glob("*/*.json")) if MJBENCH_RESULTS.is_dir() else []
)
def test_accuracy_without_ties_mjbench_matches_mjbench_on_its_own_result_files(path):
    """Every scoring-model result file MJ-Bench ships: image_0 is A; a pred that is neither
    "0" nor "1" (hps_v2.1 on nsfw has ties) is what a tie or unparsable verdict is here."""
    rows = json.loads(path.read_text())
    side = {"0": "A", "1": "B"}
    labels = {i: side[row["label"]] for i, row in enumerate(rows) if row["label"] in side}
    verdicts = [
        (i, "forward", 0, side.get(row["pred"], "tie" if row["pred"] == "tie" else "invalid"))
        for i, row in enumerate(rows)
    ]
    stats = judge_task_stats(verdicts, labels, samples=1)
    assert stats.accuracy_without_ties_mjbench == pytest.approx(
        mjbench_test_py_accuracy(rows), abs=1e-12
    )
