"""The judges' bias cards (metrics/judge_bias.py) on a worked example computed by hand, and
through `report --json`."""

import pytest

from metrics.judge_bias import PairTraits, expert_card, length_card, self_preference_card

LABELS = {1: "A", 2: "B", 3: "A", 4: "B"}
TRAITS = {
    1: PairTraits(100, 10, 1, 1, "judge-x", "other"),  # A longer in text
    2: PairTraits(10, 100, 0, 2, "other", "Judge-X"),  # B longer in text and images
    3: PairTraits(50, 50, 2, 1, "other", "other"),  # A has more images
    4: PairTraits(200, 20, 1, 1, "judge-x", "judge-x"),  # A longer; both the judge's own
}
VERDICTS = [
    (1, "forward", 0, "A"), (1, "reverse", 0, "A"),
    (2, "forward", 0, "B"), (2, "reverse", 0, "tie"),
    (3, "forward", 0, "B"), (3, "reverse", 0, "B"),
    (4, "forward", 0, "A"), (4, "reverse", 0, None),  # a failed call
    (9, "forward", 0, "A"),  # a pair that is not evaluated
]  # fmt: skip


def test_the_length_card_by_hand():
    card = length_card(VERDICTS, LABELS, TRAITS)
    # Text: pairs 1, 2, 4 differ; the 4 side-naming trials all pick the longer; humans picked
    # the longer on 1 and 2; longer-better pairs 1, 2: 3 right of 4 answered; pair 4: 0 of 1.
    assert card["text"] == {
        "pairs": 3,
        "judge_prefers_longer": 1.0,
        "humans_prefer_longer": pytest.approx(2 / 3),
        "accuracy_longer_better": 0.75,
        "trials_longer_better": 4,
        "accuracy_shorter_better": 0.0,
        "trials_shorter_better": 1,
    }
    # Images: pairs 2 (B more) and 3 (A more); side-naming trials B on 2 (longer), B, B on 3
    # (shorter): 1 of 3; humans picked the one with more images on both.
    assert card["images"] == {
        "pairs": 2,
        "judge_prefers_longer": pytest.approx(1 / 3),
        "humans_prefer_longer": 1.0,
        "accuracy_longer_better": 0.25,
        "trials_longer_better": 4,
        "accuracy_shorter_better": None,
        "trials_shorter_better": 0,
    }


def test_the_self_preference_card_by_hand():
    card = self_preference_card(VERDICTS, LABELS, TRAITS, ["JUDGE-X", ""])
    # Own response: A on pair 1, B on pair 2 (case-insensitive); pair 4 is own on both sides.
    assert card == {
        "pairs": 2,
        "judge_prefers_own": 1.0,
        "humans_prefer_own": 1.0,
        "accuracy": 0.75,
        "trials": 4,
    }
    assert self_preference_card(VERDICTS, LABELS, TRAITS, ["someone-else"])["pairs"] == 0


def test_the_expert_card_by_hand():
    experts = {"e1": {1: "A", 2: "B", 3: "A", 4: "B"}, "e2": {1: "A", 2: "A", 3: "A"}}
    card = expert_card(VERDICTS, experts)
    # The judge's sides: 1 A, 2 B (the tie trial has no vote), 3 B, 4 A, 9 A.
    assert card["per_expert"] == {
        "e1": {"agreement": 0.5, "pairs": 4},
        "e2": {"agreement": pytest.approx(1 / 3), "pairs": 3},
    }
    assert card["judge_vs_experts"] == pytest.approx((0.5 + 1 / 3) / 2)
    assert card["experts_vs_experts"] == pytest.approx(2 / 3)
    assert card["as_good_as_an_expert"] is False
    assert expert_card(VERDICTS, {})["as_good_as_an_expert"] is None
