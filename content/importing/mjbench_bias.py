"""MJ-Bench's bias files (`bias/.../scale_10_bias_dataset_<judge>.json`) as pairs.

A row is one image of an occupation shown as one demographic group: `{demographic,
occupation, images_dir, prompt, age, gender, race, nationality, religion, <score columns>,
analysis}`, the booleans saying which attributes the demographic varies. The images are not
shipped, so a response holds no content: its path stays in the pair's `metadata.origin`, its
group in `Response.groups` (`{"demographic": "old_female_muslim"}`; the file's booleans
say which attributes a demographic varies, and its value already names them). The images of
one occupation, in file order, make the task's pairs two by two (an odd one out is paired
with the occupation's first image), with the expected label "tie": an unbiased judge scores
them alike. Each score column is a pointwise judge's scores; the
judging side (judging/services/bias_import.py) turns them into verdicts on these pairs.
"""

import hashlib
import re
from collections import defaultdict
from dataclasses import dataclass
from pathlib import Path

from content.importing.errors import ImportFailed, require_storable_text
from content.importing.json_stream import json_list_records, require_file_size
from content.importing.records import PairRecord, ResponseRecord
from content.importing.upload_limits import max_text_chars

BIAS_FORMAT = "mjbench-bias"
ATTRIBUTES = ("age", "gender", "race", "nationality", "religion")
NOT_SCORES = {"demographic", "occupation", "images_dir", "prompt", "analysis", "vlm_output",
              *ATTRIBUTES}  # fmt: skip


@dataclass(frozen=True)
class BiasPair:
    external_id: str
    first: int  # row indexes (0-based) of the two images
    second: int


# Its rows are kept whole (a pair may join the first and the last row of a file): the file is
# bounded instead. MJ-Bench's own bias files are about 1 MB.
MAX_BIAS_FILE_BYTES = 64 * 1024**2


def bias_file_rows(path: Path) -> list[dict]:
    """The rows of an MJ-Bench bias file, each checked as it is read."""
    require_file_size(path, MAX_BIAS_FILE_BYTES, "MJ-Bench bias files")
    expected = "an MJ-Bench bias file: a JSON list of rows"
    rows = []
    for number, row in json_list_records(path, True, expected):
        if not isinstance(row, dict):
            raise ImportFailed("a row must be a JSON object", number)
        # Its numbers are scores, read by finite_number: a cell no judge scored (NaN,
        # Infinity) is no score, and is never stored as written.
        require_storable_text(row, number, max_chars=max_text_chars(), finite=False)
        for key in ("occupation", "demographic", "images_dir", "prompt"):
            value = row.get(key)
            if not isinstance(value, str) or not value.strip():
                raise ImportFailed(f"field {key!r} must be a non-empty string", number)
        rows.append(row)
    if not rows:
        raise ImportFailed(f"expected {expected}")
    return rows


def bias_pairs(rows: list[dict]) -> list[BiasPair]:
    """The pairs of each occupation, in file order (see the module's docstring)."""
    by_occupation: dict[str, list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        by_occupation[row["occupation"].strip()].append(index)
    pairs = []
    for occupation, indexes in by_occupation.items():
        if len(indexes) < 2:
            raise ImportFailed(f"occupation {occupation!r} has one image: nothing to compare")
        if len(indexes) % 2:
            indexes = [*indexes, indexes[0]]
        name = re.sub(r"[^a-z0-9]+", "-", occupation.lower()).strip("-")[:60]
        if not name or name != occupation.lower().strip().replace(" ", "-")[:60]:
            # Not plain ASCII words: the slug alone could merge two occupations.
            digest = hashlib.sha256(occupation.encode()).hexdigest()[:8]
            name = f"{name or 'occupation'}-{digest}"
        for number in range(0, len(indexes), 2):
            external_id = f"bias-{name}-{number // 2 + 1}"[:255]
            pairs.append(BiasPair(external_id, indexes[number], indexes[number + 1]))
    return pairs


def score_columns(rows: list[dict]) -> list[str]:
    """The columns holding a number in some row: one pointwise judge each, named as written."""
    columns = []
    for row in rows:
        for key, value in row.items():
            if key in NOT_SCORES or key in columns:
                continue
            if isinstance(value, int | float) and not isinstance(value, bool):
                columns.append(key)
    return columns


def bias_records(rows: list[dict]) -> list[PairRecord]:
    records = []
    for number, pair in enumerate(bias_pairs(rows), start=1):
        first, second = rows[pair.first], rows[pair.second]
        occupation = first["occupation"].strip()
        records.append(
            PairRecord(
                number=number,
                external_id=pair.external_id,
                prompt_source=BIAS_FORMAT,
                prompt_metadata={"occupation": occupation},
                prompt_content=[["text", first["prompt"]]],
                response_a=_response(first),
                response_b=_response(second),
                chosen="tie",
                scores=[],
                scale=None,
                metadata={"occupation": occupation},
                origin={
                    "format": BIAS_FORMAT,
                    "image_a": first["images_dir"],
                    "image_b": second["images_dir"],
                    "rows": [pair.first, pair.second],
                },
            )
        )
    return records


def _response(row: dict) -> ResponseRecord:
    groups = {"demographic": row["demographic"].strip()}
    # No content: the image is not in the file (its path is in the pair's origin).
    return ResponseRecord(model_name="unknown", content=[], groups=groups)
