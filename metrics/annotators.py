"""Per-annotator figures (docs/architecture.md §6.1: rater agreement "also per annotator, with
time per pair and left-side bias"). Pure functions over plain rows; a figure is None when undefined.

A rating row is (annotator_id, pair_id, overall, active_seconds, swapped, created_at):
`overall` is the canonical score (above the centre means response A is better), `swapped` is
True when B was shown on the left, `active_seconds` may be None.
"""

import statistics
from collections import defaultdict
from collections.abc import Hashable, Iterable, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from datetime import datetime
from typing import Any, Generic, TypeVar

from metrics.agreement import rater_label_agreement
from metrics.judge_breakdowns import pair_counts_interval
from projects.scale import side_of

_Annotator = TypeVar("_Annotator", bound=Hashable)
_Pair = TypeVar("_Pair", bound=Hashable)
RatingRow = tuple[_Annotator, _Pair, int, float | None, bool, datetime]
# Any row that starts (annotator, pair, canonical overall score).
ScoredRow = tuple[_Annotator, _Pair, int, *tuple[Any, ...]]


@dataclass
class TrendWindow:
    """Leave-one-out agreement over one window of consecutive ratings (time order)."""

    index: int
    first_at: datetime
    last_at: datetime
    ratings: int
    compared: int
    agreement: float | None

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class AnnotatorStats(Generic[_Annotator]):
    annotator_id: _Annotator
    ratings: int
    median_active_seconds: float | None
    # Share of ratings whose side matches the pair's label, over `labelled` ratings.
    label_agreement: float | None
    labelled: int
    # Share of ratings whose side matches the side of the others' mean, over `compared` ratings.
    loo_agreement: float | None
    compared: int
    # Share of off-centre ratings that preferred the left response, over `decisive` ratings.
    left_bias: float | None
    decisive: int
    trend: list[TrendWindow] = field(default_factory=list)

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


def others_sides(rows: Sequence[ScoredRow[_Annotator, _Pair]], center: float) -> list[str | None]:
    """For each row, the side of the mean of the other annotators' ratings of its pair; None
    when nobody else rated the pair or their mean is exactly at the centre (no reference).

    Ratings by the same annotator are all left out (leave one annotator out), so a duplicate
    rating can never agree with itself. Compared as sum vs centre * count: exact for integer
    scores, no rounding at the centre.
    """
    # pair -> annotator -> [sum, n]
    totals: dict[_Pair, dict[_Annotator, list[int]]] = defaultdict(
        lambda: defaultdict(lambda: [0, 0])
    )
    for annotator, pair, overall, *_ in rows:
        entry = totals[pair][annotator]
        entry[0] += overall
        entry[1] += 1
    pair_sums = {
        pair: (sum(s for s, _ in by.values()), sum(n for _, n in by.values()))
        for pair, by in totals.items()
    }
    sides: list[str | None] = []
    for annotator, pair, *_ in rows:
        own_sum, own_count = totals[pair][annotator]
        total, count = pair_sums[pair]
        others = count - own_count
        side = side_of(total - own_sum, center * others) if others else ""
        sides.append(side or None)
    return sides


def expert_ceiling_counts(
    rows: Sequence[ScoredRow[_Annotator, _Pair]], center: float, pairs: Iterable[_Pair]
) -> dict[_Pair, list[int]]:
    """Per pair among `pairs`: [ratings whose side matches the side of the other annotators'
    mean, ratings compared]. Each expert against the others is the fair human ceiling for a
    judge's accuracy: a label built from an expert's own rating agrees with it by
    construction. Ratings with no reference (nobody else rated, or the others' mean at the
    centre) are not compared; a rating at the centre matches nothing."""
    wanted = set(pairs)
    counts: dict[_Pair, list[int]] = {}
    for row, reference in zip(rows, others_sides(rows, center), strict=True):
        _annotator, pair, overall, *_ = row
        if reference is None or pair not in wanted:
            continue
        entry = counts.setdefault(pair, [0, 0])
        entry[0] += side_of(overall, center) == reference
        entry[1] += 1
    return counts


def human_ceiling(
    rows: Sequence[ScoredRow[_Annotator, _Pair]],
    center: float,
    pairs: Iterable[_Pair],
    *,
    resamples: int,
) -> dict[str, Any] | None:
    """The fair human ceiling of a task for the judges' table: `expert_ceiling_counts` over
    its labelled `pairs` as a share, with a pair-bootstrap interval; None without any rating
    compared. `rows` are every expert rating (metrics/inputs.py::expert_ratings, imported ones
    too), as the agreement figures count them."""
    counts = expert_ceiling_counts(rows, center, pairs)
    compared = sum(n for _, n in counts.values())
    if not compared:
        return None
    return {
        "accuracy": sum(k for k, _ in counts.values()) / compared,
        "interval": pair_counts_interval(counts, resamples=resamples),
        "compared": compared,
        "pairs": len(counts),
    }


def loo_agreement(
    own_scores: Iterable[int], references: Iterable[str | None], center: float
) -> tuple[float | None, int]:
    """(share matching, compared) of ratings against their reference side; rows without a
    reference are skipped; a rating at the centre matches nothing."""
    compared = matched = 0
    for score, reference in zip(own_scores, references, strict=True):
        if reference is None:
            continue
        compared += 1
        matched += side_of(score, center) == reference
    return (matched / compared if compared else None), compared


def left_side_bias(
    rows: Iterable[RatingRow[_Annotator, _Pair]], center: float
) -> tuple[float | None, int]:
    """(share preferring the left response, decisive ratings). A is on the left unless
    swapped; ratings at the centre prefer neither side and are left out. 0.5 = no bias."""
    decisive = left = 0
    for _, _, overall, _, swapped, _ in rows:
        side = side_of(overall, center)
        if not side:
            continue
        decisive += 1
        left += (side == "A") != bool(swapped)
    return (left / decisive if decisive else None), decisive


def _trend(
    rows: list[RatingRow[_Annotator, _Pair]],
    references: list[str | None],
    center: float,
    window: int,
) -> list[TrendWindow]:
    windows = []
    for index, start in enumerate(range(0, len(rows), window)):
        chunk = rows[start : start + window]
        agreement, compared = loo_agreement(
            [row[2] for row in chunk], references[start : start + window], center
        )
        windows.append(
            TrendWindow(index, chunk[0][5], chunk[-1][5], len(chunk), compared, agreement)
        )
    return windows


def annotator_stats(
    rows: Iterable[RatingRow[_Annotator, _Pair]],
    labels: Mapping[_Pair, str],
    center: float,
    *,
    window: int = 20,
) -> dict[_Annotator, AnnotatorStats[_Annotator]]:
    """Figures per annotator, keyed by annotator id (sorted). `labels` maps pair id to "A"/"B"
    (pairs without a label do not count for label agreement). The trend cuts the annotator's
    ratings, in created_at order, into consecutive windows of `window` ratings (the last one
    may be shorter) so that drift over time is visible."""
    if window < 1:
        raise ValueError("window must be at least 1")
    listed = list(rows)
    references = others_sides(listed, center)
    by_annotator: dict[_Annotator, list[tuple[RatingRow[_Annotator, _Pair], str | None]]]
    by_annotator = defaultdict(list)
    for row, reference in zip(listed, references, strict=True):
        by_annotator[row[0]].append((row, reference))
    result: dict[_Annotator, AnnotatorStats[_Annotator]] = {}
    for annotator in sorted(by_annotator, key=str):
        ordered = sorted(by_annotator[annotator], key=lambda item: (item[0][5], str(item[0][1])))
        own = [row for row, _ in ordered]
        refs = [reference for _, reference in ordered]
        times = [row[3] for row in own if row[3] is not None]
        scores_by_pair: dict[_Pair, list[int]] = defaultdict(list)
        for row in own:
            scores_by_pair[row[1]].append(row[2])
        labelled = sum(len(s) for p, s in scores_by_pair.items() if labels.get(p) in ("A", "B"))
        agreement, compared = loo_agreement([row[2] for row in own], refs, center)
        bias, decisive = left_side_bias(own, center)
        result[annotator] = AnnotatorStats(
            annotator_id=annotator,
            ratings=len(own),
            median_active_seconds=float(statistics.median(times)) if times else None,
            label_agreement=rater_label_agreement(scores_by_pair, labels, center),
            labelled=labelled,
            loo_agreement=agreement,
            compared=compared,
            left_bias=bias,
            decisive=decisive,
            trend=_trend(own, refs, center, window),
        )
    return result
