"""Bias cards per judge and task (docs/architecture.md §6.2a): does the judge favour
the longer response (in text, in images), its own model's responses, and does it agree with
each expert as well as the experts agree with each other? Pure functions over plain rows.

Verdict rows are metrics.judge_accuracy.VerdictRow (pair, order, sample, canonical choice); a trial
that names no side (tie, invalid, failed) counts in no preference share. `labels` holds the
evaluated pairs (kept, labelled A or B). MJ-Bench's ACC/NDS/GES over demographic groups are a
different figure ("bias", the fidelity issue), not these cards.
"""

from collections import Counter, defaultdict
from collections.abc import Collection, Iterable, Iterator, Mapping
from dataclasses import dataclass
from itertools import combinations
from typing import Any

from metrics.judge_accuracy import VerdictRow


@dataclass(frozen=True)
class PairTraits:
    """What the cards need to know of a pair's two responses."""

    text_a: int  # characters of text
    text_b: int
    images_a: int
    images_b: int
    model_a: str  # generator names
    model_b: str


def _share(hits: int, n: int) -> float | None:
    return hits / n if n else None


def _sided(verdicts: Iterable[VerdictRow], labels: Mapping[int, str]) -> Iterator[tuple[int, str]]:
    """(pair, choice) of the trials on evaluated pairs that name a side."""
    for pair_id, _order, _sample, choice in verdicts:
        if pair_id in labels and choice in ("A", "B"):
            yield pair_id, choice


def _accuracy(
    verdicts: Iterable[VerdictRow], labels: Mapping[int, str], pair_ids: Collection[int]
) -> tuple[float | None, int]:
    """MMRB2's accuracy (ties and invalid wrong, failed calls out) over these pairs."""
    answered = [
        (pair_id, choice)
        for pair_id, _o, _s, choice in verdicts
        if pair_id in pair_ids and choice is not None
    ]
    correct = sum(choice == labels[pair_id] for pair_id, choice in answered)
    return _share(correct, len(answered)), len(answered)


def length_card(
    verdicts: list[VerdictRow], labels: Mapping[int, str], traits: Mapping[int, PairTraits]
) -> dict[str, dict[str, float | None]]:
    """Per measure (text characters, image count), over the evaluated pairs whose responses
    differ on it: how often the judge and the humans prefer the longer one, and the judge's
    accuracy when the longer one is the better (and when the shorter is)."""
    card: dict[str, dict[str, float | None]] = {}
    for measure in ("text", "images"):
        longer: dict[int, str] = {}
        for pair_id in labels:
            t = traits.get(pair_id)
            if t is None:
                continue
            a, b = (t.text_a, t.text_b) if measure == "text" else (t.images_a, t.images_b)
            if a != b:
                longer[pair_id] = "A" if a > b else "B"
        sided = [(p, c) for p, c in _sided(verdicts, labels) if p in longer]
        longer_wins = {p for p in longer if labels[p] == longer[p]}
        shorter_wins = set(longer) - longer_wins
        accuracy_longer, n_longer = _accuracy(verdicts, labels, longer_wins)
        accuracy_shorter, n_shorter = _accuracy(verdicts, labels, shorter_wins)
        card[measure] = {
            "pairs": len(longer),
            "judge_prefers_longer": _share(sum(c == longer[p] for p, c in sided), len(sided)),
            "humans_prefer_longer": _share(len(longer_wins), len(longer)),
            "accuracy_longer_better": accuracy_longer,
            "trials_longer_better": n_longer,
            "accuracy_shorter_better": accuracy_shorter,
            "trials_shorter_better": n_shorter,
        }
    return card


def _own_side(t: PairTraits, own_names: set[str]) -> str | None:
    a, b = t.model_a.casefold() in own_names, t.model_b.casefold() in own_names
    return "A" if a and not b else "B" if b and not a else None


def self_preference_card(
    verdicts: list[VerdictRow],
    labels: Mapping[int, str],
    traits: Mapping[int, PairTraits],
    own_names: Iterable[str],
) -> dict[str, float | None]:
    """Over the evaluated pairs where exactly one response comes from the judge's own model
    (its generator name equals the judge's model or name, case-insensitively): how often the
    judge and the humans prefer that response, and the judge's accuracy there."""
    names = {name.casefold() for name in own_names if name}
    own: dict[int, str] = {}
    for pair_id in labels:
        t = traits.get(pair_id)
        side = _own_side(t, names) if t is not None else None
        if side is not None:
            own[pair_id] = side
    sided = [(p, c) for p, c in _sided(verdicts, labels) if p in own]
    accuracy, trials = _accuracy(verdicts, labels, set(own))
    return {
        "pairs": len(own),
        "judge_prefers_own": _share(sum(c == own[p] for p, c in sided), len(sided)),
        "humans_prefer_own": _share(sum(labels[p] == own[p] for p in own), len(own)),
        "accuracy": accuracy,
        "trials": trials,
    }


def _agreement(first: Mapping[int, str], second: Mapping[int, str]) -> tuple[float | None, int]:
    shared = [p for p in first if p in second]
    return _share(sum(first[p] == second[p] for p in shared), len(shared)), len(shared)


def expert_card(
    verdicts: list[VerdictRow], expert_sides: Mapping[str, Mapping[int, str]]
) -> dict[str, Any]:
    """Is the judge as good as an expert? The judge's side per pair (the majority of its
    trials that name a side; none on a tie of votes) against each expert's side, beside the
    experts' agreement with each other, over the pairs both rated (sides A or B only)."""
    votes: dict[int, Counter[str]] = defaultdict(Counter)
    for pair_id, _order, _sample, choice in verdicts:
        if choice in ("A", "B"):
            votes[pair_id][choice] += 1
    judge = {p: c.most_common(1)[0][0] for p, c in votes.items() if len(c) == 1 or c["A"] != c["B"]}
    per_expert: dict[str, dict[str, float | None]] = {}
    for name, sides in sorted(expert_sides.items()):
        agreement, n = _agreement(judge, sides)
        per_expert[name] = {"agreement": agreement, "pairs": n}
    between = [_agreement(x, y) for x, y in combinations(expert_sides.values(), 2)]
    judge_values = [e["agreement"] for e in per_expert.values() if e["agreement"] is not None]
    expert_values = [value for value, _n in between if value is not None]
    judge_mean = sum(judge_values) / len(judge_values) if judge_values else None
    expert_mean = sum(expert_values) / len(expert_values) if expert_values else None
    return {
        "judge_vs_experts": judge_mean,
        "experts_vs_experts": expert_mean,
        "as_good_as_an_expert": None
        if judge_mean is None or expert_mean is None
        else judge_mean >= expert_mean,
        "per_expert": per_expert,
    }
