"""More judge figures (docs/architecture.md §6.2): bootstrap interval of accuracy, accuracy by group
(same-model vs cross-model, image bias) and majority vote over K samples.

Same protocol as metrics.judge_accuracy: a verdict row is (pair_id, order, sample, choice) with the
canonical choice "A", "B", "tie", "invalid" or None (failed call); each forward and reverse
verdict is one trial, correct when the choice equals the pair's label, tie and invalid count as
wrong, None is left out. Only pairs in `labels` (labelled "A" or "B") are evaluated.
"""

from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from typing import TypeVar

from metrics.bootstrap import Interval, bootstrap_ratio_interval
from metrics.judge_accuracy import VerdictRow

PREFERRED_HAS_IMAGE = "preferred-has-image"
PREFERRED_LACKS_IMAGE = "preferred-lacks-image"

GroupAccuracy = tuple[float | None, int]  # accuracy (None when nothing evaluated), evaluated
_Pair = TypeVar("_Pair", bound=Hashable)


def pair_counts_interval(
    counts: Mapping[_Pair, Sequence[int]],
    *,
    resamples: int = 1000,
    seed: int = 0,
    level: float = 0.95,
) -> Interval | None:
    """Percentile bootstrap interval of the accuracy from per-pair [correct, evaluated] counts
    (those metrics.judge_accuracy.judge_task_stats fills), resampling pairs: all trials of a pair go
    together, since forward/reverse and samples of one pair are not independent. Pairs with no
    evaluated trial are not units. None with fewer than 2 such pairs."""
    pairs = sorted(counts, key=str)  # a fixed unit order keeps the seed reproducible
    return bootstrap_ratio_interval(
        [counts[p][0] for p in pairs],
        [counts[p][1] for p in pairs],
        resamples=resamples,
        seed=seed,
        level=level,
    )


def split_accuracy(
    pair_counts: Mapping[_Pair, Sequence[int]],
    groups: Mapping[_Pair, Iterable[str]],
    names: Sequence[str],
) -> list[GroupAccuracy]:
    """(accuracy | None, evaluated) of each group in `names`, in that order, from per-pair
    [correct, evaluated] counts (those metrics.judge_accuracy.judge_task_stats fills).
    `groups` maps a pair to the groups it belongs to (a pair may be in several, or none)."""
    totals = {name: [0, 0] for name in names}
    for pair_id, (correct, evaluated) in pair_counts.items():
        for group in groups.get(pair_id, ()):
            if group in totals:
                totals[group][0] += correct
                totals[group][1] += evaluated
    return [(c / n if n else None, n) for c, n in (totals[name] for name in names)]


def image_bias_groups(
    pairs: Mapping[_Pair, tuple[bool, bool]], labels: Mapping[_Pair, str]
) -> dict[_Pair, str]:
    """For labelled pairs where exactly one response holds an image ((A has image, B has
    image)), the group PREFERRED_HAS_IMAGE or PREFERRED_LACKS_IMAGE by whether the labelled
    (preferred) response is the one holding it. Other pairs are absent. Feed to split_accuracy."""
    result = {}
    for pair_id, (a_image, b_image) in pairs.items():
        label = labels.get(pair_id)
        if bool(a_image) == bool(b_image) or label not in ("A", "B"):
            continue
        preferred_has = bool(a_image) if label == "A" else bool(b_image)
        result[pair_id] = PREFERRED_HAS_IMAGE if preferred_has else PREFERRED_LACKS_IMAGE
    return result


def majority_choice(choices: Sequence[str]) -> str | None:
    """The decisive majority of answers: "A" or "B", whichever was chosen more often; tie and
    invalid answers abstain. None when A and B are level (including no decisive answer)."""
    a_votes = sum(1 for c in choices if c == "A")
    b_votes = sum(1 for c in choices if c == "B")
    if a_votes == b_votes:
        return None
    return "A" if a_votes > b_votes else "B"


def majority_vote_curve(
    verdicts: Iterable[VerdictRow],
    labels: Mapping[int, str],
    ks: Sequence[int] = (1, 3, 5, 7, 9),
) -> dict[int, GroupAccuracy]:
    """{K: (accuracy | None, evaluated)} where each (pair, order) answers with the majority of
    its samples 0..K-1 (majority_choice), correct when that equals the label; a level vote or no
    decisive answer is wrong. A (pair, order) is evaluated for K only when all of its samples
    0..K-1 were answered (a failed call or a missing sample leaves it out for that K)."""
    answers: dict[tuple[int, str], dict[int, str]] = defaultdict(dict)  # -> sample -> choice
    for pair_id, order, sample, choice in verdicts:
        if labels.get(pair_id) in ("A", "B") and choice is not None:
            answers[(pair_id, order)][sample] = choice
    curve = {}
    for k in ks:
        if k < 1:
            raise ValueError("K must be at least 1")
        correct = evaluated = 0
        for (pair_id, _order), by_sample in answers.items():
            if any(s not in by_sample for s in range(k)):
                continue
            evaluated += 1
            correct += majority_choice([by_sample[s] for s in range(k)]) == labels[pair_id]
        curve[k] = (correct / evaluated if evaluated else None, evaluated)
    return curve
