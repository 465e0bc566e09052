"""Arbiter's own fields of a native row (docs/export-format.md, "A JSONL row").

Imported: `ratings` (annotator id, overall, aspects, active time, rationale), `reference_label`,
`adjudication`, `metadata` and per-response `grades`. Accepted and ignored: `task`, `status`,
`mean`, `span`, `decided_by`, `verdicts` and anything else: they follow from the imported
fields (the import decides the pair again) or belong to other parts of Arbiter.
"""

import math
import re
from dataclasses import dataclass

from content.importing.errors import ImportFailed

# Exported annotator ids are "r-" + 12 hex digits, or the X of a placeholder imported-<P>-X.
ANNOTATOR_ID = re.compile(r"[A-Za-z0-9_.-]{1,64}")
DECISIONS = ("keep_a", "keep_b", "drop")
REFERENCE_LABELS = ("A", "B", "tie", "")
MAX_ASPECT_KEY = 64  # AspectScore.aspect


@dataclass
class RatingRecord:
    """One rating of an export row, kept under its (anonymous) annotator id."""

    annotator: str
    overall: int
    aspects: dict[str, int]
    active_seconds: float
    rationale: str


def read_arbiter_fields(obj: dict, record) -> None:
    """Validate the Arbiter fields of `obj` into `record` (a PairRecord already holding the
    MMRB2 fields). Raises ImportFailed with the record number."""
    number = record.number
    if obj.get("metadata") is not None:
        if not isinstance(obj["metadata"], dict):
            raise ImportFailed("metadata must be an object", number)
        record.metadata = obj["metadata"]
    reference = obj.get("reference_label")
    if reference is not None:
        if reference not in REFERENCE_LABELS:
            raise ImportFailed(
                f"reference_label={reference!r} must be 'A', 'B', 'tie' or ''", number
            )
        record.reference_label = reference
    for key, side in (("response_a", record.response_a), ("response_b", record.response_b)):
        grades = obj[key].get("grades")
        if grades is None:
            continue
        letters = isinstance(grades, list) and all(isinstance(g, str) and g.strip() for g in grades)
        if not letters:
            raise ImportFailed(f"{key}.grades must be a list of grade letters", number)
        grades = [g.strip() for g in grades]
        if side.grades and side.grades != grades:
            raise ImportFailed(
                f"{key}.grades {grades} disagree with human_annotations ({side.grades})", number
            )
        side.grades = grades
    if obj.get("ratings") is not None:
        record.ratings = _ratings(obj["ratings"], record.scale, number)
        overall = [rating.overall for rating in record.ratings]
        if overall != record.scores:
            raise ImportFailed(
                f"the ratings' overall scores {overall} differ from human_annotations "
                f"{obj.get('human_annotations')!r}: they must be the same scores in the same order",
                number,
            )
    if obj.get("adjudication") is not None:
        record.adjudication = _adjudication(obj["adjudication"], number)


def _ratings(value: object, scale: int, number: int) -> list[RatingRecord]:
    if not isinstance(value, list):
        raise ImportFailed("ratings must be a list of rating objects", number)
    ratings, seen = [], set()
    for index, item in enumerate(value):
        where = f"ratings[{index}]"
        if not isinstance(item, dict):
            raise ImportFailed(f"{where} must be an object", number)
        annotator = item.get("annotator")
        if not isinstance(annotator, str) or not ANNOTATOR_ID.fullmatch(annotator):
            raise ImportFailed(
                f"{where}.annotator={annotator!r} must be 1 to 64 letters, digits, '_', '.' or '-'",
                number,
            )
        if annotator in seen:
            raise ImportFailed(f"{where}.annotator {annotator!r} rates this pair twice", number)
        seen.add(annotator)
        ratings.append(
            RatingRecord(
                annotator=annotator,
                overall=_score(item.get("overall"), f"{where}.overall", scale, number),
                aspects=_aspects(item.get("aspects", {}), f"{where}.aspects", scale, number),
                active_seconds=_seconds(item.get("active_seconds", 0), where, number),
                rationale=_rationale(item.get("rationale", ""), where, number),
            )
        )
    return ratings


def _score(value: object, where: str, scale: int, number: int) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise ImportFailed(f"{where}={value!r} is not an integer", number)
    if not 1 <= value <= scale:
        raise ImportFailed(f"{where}={value} is outside the scale 1..{scale}", number)
    return value


def _aspects(value: object, where: str, scale: int, number: int) -> dict[str, int]:
    if not isinstance(value, dict):
        raise ImportFailed(f"{where} must be an object of aspect scores", number)
    for key, score in value.items():
        if not key or len(key) > MAX_ASPECT_KEY:
            raise ImportFailed(
                f"{where} key {key!r} must be 1 to {MAX_ASPECT_KEY} characters", number
            )
        _score(score, f"{where}.{key}", scale, number)
    return dict(value)


def _seconds(value: object, where: str, number: int) -> float:
    if (
        not isinstance(value, int | float)
        or isinstance(value, bool)
        or not math.isfinite(value)
        or value < 0
    ):
        raise ImportFailed(f"{where}.active_seconds={value!r} must be a number >= 0", number)
    return float(value)


def _rationale(value: object, where: str, number: int) -> str:
    if not isinstance(value, str):
        raise ImportFailed(f"{where}.rationale must be a string", number)
    return value


def _adjudication(value: object, number: int) -> tuple[str, str]:
    if not isinstance(value, dict):
        raise ImportFailed("adjudication must be an object or null", number)
    decision, note = value.get("decision"), value.get("note", "")
    if decision not in DECISIONS:
        raise ImportFailed(
            f"adjudication.decision={decision!r} must be one of {', '.join(DECISIONS)}", number
        )
    if not isinstance(note, str):
        raise ImportFailed("adjudication.note must be a string", number)
    return decision, note
