"""metrics.judge_breakdowns: accuracy intervals, split accuracy, image bias, majority vote."""

import random

import pytest

from metrics.bootstrap import bootstrap_ratio_interval
from metrics.judge_accuracy import judge_task_stats
from metrics.judge_breakdowns import (
    PREFERRED_HAS_IMAGE,
    PREFERRED_LACKS_IMAGE,
    image_bias_groups,
    majority_choice,
    majority_vote_curve,
    pair_counts_interval,
    split_accuracy,
)


def accuracy_interval(verdicts, labels, **options):
    """The judges page's interval: per-pair counts from judge_task_stats, then the bootstrap."""
    counts: dict = {}
    judge_task_stats(verdicts, labels, 1, counts)
    return pair_counts_interval(counts, **options)


def split(verdicts, labels, groups):
    """split_accuracy as a dict, from verdicts, with one group per pair (as the tests name them)."""
    counts: dict = {}
    judge_task_stats(verdicts, labels, 1, counts)
    names = sorted(set(groups.values()))
    found = split_accuracy(counts, {p: (g,) for p, g in groups.items()}, names)
    return dict(zip(names, found, strict=True))


# ---------------------------------------------------------------- accuracy_interval


def test_accuracy_interval_resamples_whole_pairs_by_hand():
    # Pair 1: 4 trials, all correct. Pair 2: 2 trials, both wrong (tie, invalid).
    # Resampling pairs gives [1, 1] -> 8/8 = 1 (p 1/4), [1, 2] -> 4/6 = 2/3 (p 1/2),
    # [2, 2] -> 0/4 = 0 (p 1/4). A 40 % interval (percentiles 30 and 70) lies in the middle
    # half: (2/3, 2/3). Resampling the 6 trials instead would give a 30th percentile of 3/6.
    verdicts = [
        (1, "forward", 0, "A"),
        (1, "reverse", 0, "A"),
        (1, "forward", 1, "A"),
        (1, "reverse", 1, "A"),
        (2, "forward", 0, "tie"),
        (2, "reverse", 0, "invalid"),
    ]
    labels = {1: "A", 2: "B"}
    assert accuracy_interval(verdicts, labels, level=0.4) == pytest.approx((2 / 3, 2 / 3))
    assert accuracy_interval(verdicts, labels) == (0.0, 1.0)


def test_accuracy_interval_ignores_failed_calls_and_unlabelled_pairs():
    verdicts = [(1, "forward", 0, "A"), (2, "forward", 0, "A"), (2, "reverse", 0, "B")]
    noisy = verdicts + [
        (1, "reverse", 0, None),  # failed call: left out
        (3, "forward", 0, None),  # a labelled pair with only failed calls: not a unit
        (9, "forward", 0, "A"),  # unlabelled pair: ignored
    ]
    labels = {1: "A", 2: "B", 3: "A"}
    assert accuracy_interval(noisy, labels, seed=4) == accuracy_interval(verdicts, labels, seed=4)


def test_accuracy_interval_equals_the_ratio_bootstrap_of_pair_counts():
    # Per pair (correct, evaluated), pairs in id order: 1 -> (1, 2), 2 -> (2, 2), 3 -> (0, 1).
    verdicts = [
        (1, "forward", 0, "A"),
        (1, "reverse", 0, "B"),
        (2, "forward", 0, "B"),
        (2, "reverse", 0, "B"),
        (3, "forward", 0, "tie"),
    ]
    labels = {1: "A", 2: "B", 3: "A"}
    assert accuracy_interval(verdicts, labels, seed=8) == bootstrap_ratio_interval(
        [1, 2, 0], [2, 2, 1], seed=8
    )


def test_accuracy_interval_contains_accuracy_and_is_reproducible():
    rng = random.Random(3)
    labels = {p: rng.choice("AB") for p in range(200)}
    verdicts = [
        (p, order, 0, labels[p] if rng.random() < 0.7 else rng.choice(["A", "B", "tie"]))
        for p in labels
        for order in ("forward", "reverse")
    ]
    accuracy = judge_task_stats(verdicts, labels, 1).accuracy
    interval = accuracy_interval(verdicts, labels, seed=1)
    assert interval == accuracy_interval(verdicts, labels, seed=1)
    assert interval != accuracy_interval(verdicts, labels, seed=2)
    low, high = interval
    assert low < accuracy < high
    # 400 trials at ~0.75: the standard error is about 0.02-0.03, so the width ~0.1.
    assert 0.04 < high - low < 0.2


def test_accuracy_interval_needs_two_pairs():
    assert accuracy_interval([(1, "forward", 0, "A")], {1: "A"}) is None
    assert accuracy_interval([], {1: "A"}) is None


# ---------------------------------------------------------------- split_accuracy

SPLIT_VERDICTS = [
    (1, "forward", 0, "A"),  # same: correct
    (1, "reverse", 0, "tie"),  # same: wrong
    (2, "forward", 0, "B"),  # cross: correct
    (2, "reverse", 0, None),  # failed call: left out
    (3, "forward", 0, "invalid"),  # cross: wrong
    (3, "reverse", 0, "A"),  # cross: correct
    (4, "forward", 0, "A"),  # unlabelled pair: ignored
    (6, "forward", 0, "A"),  # labelled, but in no group: ignored
]
SPLIT_LABELS = {1: "A", 2: "B", 3: "A", 6: "A"}


def test_split_accuracy_by_hand():
    groups = {1: "same-model", 2: "cross-model", 3: "cross-model", 4: "same-model", 5: "other"}
    # same-model: 1 of 2; cross-model: 2 of 3; "other" (pair 5) has no verdict: (None, 0).
    assert split(SPLIT_VERDICTS, SPLIT_LABELS, groups) == {
        "cross-model": (pytest.approx(2 / 3), 3),
        "other": (None, 0),
        "same-model": (0.5, 2),
    }


def test_split_accuracy_groups_add_up_to_the_overall_figure():
    groups = {1: "x", 2: "y", 3: "y", 6: "y"}
    found = split(SPLIT_VERDICTS, SPLIT_LABELS, groups)
    overall = judge_task_stats(SPLIT_VERDICTS, SPLIT_LABELS, 1)
    assert sum(n for _, n in found.values()) == overall.evaluated == 6
    assert sum(a * n for a, n in found.values()) == pytest.approx(overall.correct)


def test_split_accuracy_accepts_an_iterator_and_empty_groups():
    assert split(iter(SPLIT_VERDICTS), SPLIT_LABELS, {1: "g"}) == {"g": (0.5, 2)}
    assert split(SPLIT_VERDICTS, SPLIT_LABELS, {}) == {}


def test_a_pair_in_two_groups_counts_in_both_and_absent_groups_read_none():
    counts = {1: [1, 2], 2: [2, 2]}  # pair -> [correct, evaluated]
    groups = {1: ("same model", "preferred-has-image"), 2: ("cross model",)}
    names = ("same model", "cross model", "preferred-has-image", "preferred-lacks-image")
    assert split_accuracy(counts, groups, names) == [(0.5, 2), (1.0, 2), (0.5, 2), (None, 0)]


# ---------------------------------------------------------------- image_bias_groups


def test_image_bias_groups_by_hand():
    pairs = {
        1: (True, False),  # label A holds the image -> has
        2: (True, False),  # label B, only A holds one -> lacks
        3: (False, True),  # label B holds it -> has
        4: (True, True),  # both: absent
        5: (False, False),  # neither: absent
        6: (False, True),  # label A, only B holds one -> lacks
        7: (True, False),  # unlabelled: absent
    }
    labels = {1: "A", 2: "B", 3: "B", 4: "A", 5: "B", 6: "A"}
    assert image_bias_groups(pairs, labels) == {
        1: PREFERRED_HAS_IMAGE,
        2: PREFERRED_LACKS_IMAGE,
        3: PREFERRED_HAS_IMAGE,
        6: PREFERRED_LACKS_IMAGE,
    }
    assert (PREFERRED_HAS_IMAGE, PREFERRED_LACKS_IMAGE) == (
        "preferred-has-image",
        "preferred-lacks-image",
    )


def test_image_bias_split_of_an_image_loving_judge():
    # A judge that always picks the response with the image: right whenever the preferred one
    # holds it, wrong otherwise -> has-image 1.0 over 4 trials, lacks-image 0.0 over 4.
    pairs = {1: (True, False), 2: (False, True), 3: (True, False), 4: (False, True)}
    labels = {1: "A", 2: "B", 3: "B", 4: "A"}
    verdicts = [
        (p, order, 0, "A" if a_image else "B")
        for p, (a_image, _) in pairs.items()
        for order in ("forward", "reverse")
    ]
    groups = image_bias_groups(pairs, labels)
    assert split(verdicts, labels, groups) == {
        PREFERRED_HAS_IMAGE: (1.0, 4),
        PREFERRED_LACKS_IMAGE: (0.0, 4),
    }


# ---------------------------------------------------------------- majority vote


def test_majority_choice():
    assert majority_choice(["A", "B", "A"]) == "A"
    assert majority_choice(["B"]) == "B"
    assert majority_choice(["tie", "tie", "A"]) == "A"  # tie/invalid abstain
    assert majority_choice(["A", "B", "tie"]) is None  # level vote
    assert majority_choice(["tie", "invalid"]) is None  # no decisive answer
    assert majority_choice([]) is None


MAJORITY_VERDICTS = [
    # (1, forward): A, B, A, tie, B
    (1, "forward", 0, "A"),
    (1, "forward", 1, "B"),
    (1, "forward", 2, "A"),
    (1, "forward", 3, "tie"),
    (1, "forward", 4, "B"),
    # (1, reverse): B, A, A (only three samples)
    (1, "reverse", 0, "B"),
    (1, "reverse", 1, "A"),
    (1, "reverse", 2, "A"),
    # (2, forward): tie, invalid, B, failed, B
    (2, "forward", 0, "tie"),
    (2, "forward", 1, "invalid"),
    (2, "forward", 2, "B"),
    (2, "forward", 3, None),
    (2, "forward", 4, "B"),
    # (2, reverse): invalid (one sample)
    (2, "reverse", 0, "invalid"),
    # unlabelled pair: ignored
    (3, "forward", 0, "A"),
]


def test_majority_vote_curve_by_hand():
    labels = {1: "A", 2: "B"}
    # K = 1: (1,f) A ok, (1,r) B wrong, (2,f) tie wrong, (2,r) invalid wrong -> 1/4.
    # K = 3: (1,f) A,B,A -> A ok; (1,r) B,A,A -> A ok; (2,f) tie,invalid,B -> B ok;
    #        (2,r) one sample: left out -> 3/3.
    # K = 5: (1,f) A,B,A,tie,B -> 2 to 2, wrong; (1,r) three samples and (2,f) sample 3
    #        failed: left out -> 0/1.
    # K = 7: nothing has 7 samples -> (None, 0).
    assert majority_vote_curve(MAJORITY_VERDICTS, labels, ks=(1, 3, 5, 7)) == {
        1: (0.25, 4),
        3: (1.0, 3),
        5: (0.0, 1),
        7: (None, 0),
    }
    assert list(majority_vote_curve(MAJORITY_VERDICTS, labels)) == [1, 3, 5, 7, 9]


def test_majority_vote_k1_equals_plain_accuracy_on_sample_zero():
    rng = random.Random(5)
    labels = {p: rng.choice("AB") for p in range(50)}
    verdicts = [
        (p, order, s, rng.choice(["A", "B", "tie", "invalid", None]))
        for p in labels
        for order in ("forward", "reverse")
        for s in range(3)
    ]
    first = [v for v in verdicts if v[2] == 0]
    stats = judge_task_stats(first, labels, 1)
    assert majority_vote_curve(verdicts, labels, ks=(1,)) == {1: (stats.accuracy, stats.evaluated)}


def test_majority_vote_rejects_k_below_one():
    with pytest.raises(ValueError):
        majority_vote_curve(MAJORITY_VERDICTS, {1: "A"}, ks=(0,))
