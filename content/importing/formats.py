"""Pair file formats, each turned into the same `PairRecord`s.

- native:  JSONL, one MMRB2 pair object per line (optionally `"scale": K` for its scores).
- mmrb2:   `{"pairs": [PAIR, ...]}`, MMRB2's release files (prompt_content may be absent).
- mjbench: JSON list or JSONL of MJ-Bench rows, every shape of its files (see mjbench_record).
- parquet: Arbiter's export or MMRB2's Hugging Face layout, images inside (see parquet.py).
A native row may carry Arbiter's own fields (ratings, adjudication, ...; see native.py).
Every problem is raised as ImportFailed with the record number (1-based: line for JSONL,
position in the list for JSON). Hostile input (limits.py, json_stream.py): files are read
one record at a time, JSON nested deeper than MAX_JSON_DEPTH is refused before it is parsed,
and so is a record above ARBITER_IMPORT_MAX_RECORD_BYTES; a string longer than
ARBITER_MAX_TEXT_CHARS or a number that is not finite anywhere in a record refuses the import.
"""

import hashlib
from collections.abc import Iterator
from pathlib import Path

from content.importing.errors import ImportFailed, require_storable_text
from content.importing.json_stream import json_list_records, jsonl_records, mmrb2_records
from content.importing.mjbench_bias import bias_file_rows, bias_records
from content.importing.native import read_arbiter_fields
from content.importing.records import GoldMark, PairRecord, ResponseRecord
from content.importing.upload_limits import max_text_chars

MMRB2_SCALE = 6
FORMATS = ("native", "mmrb2", "mjbench", "parquet")
TEXT_FORMATS = ("native", "mmrb2", "mjbench")  # JSON text files, images from a folder
# A small valid file of each format, offered by the upload form (static/samples/, written by
# devtools/import_samples.py and imported by the tests).
SAMPLE_FILES = {
    "native": "arbiter-native-sample.zip",
    "mmrb2": "mmrb2-sample.zip",
    "mjbench": "mjbench-sample.zip",
    "parquet": "parquet-sample.parquet",
}

MAX_GOLD_EXPLANATION = 2000


def _gold(value, number: int) -> GoldMark | None:
    """`"gold": "A"` or `{"side": "A", "explanation": "...", "qualification": true}`."""
    if value is None or value == "":
        return None
    if isinstance(value, str):
        value = {"side": value}
    if not isinstance(value, dict):
        raise ImportFailed("gold must be 'A', 'B' or an object with a side", number)
    unknown = set(value) - {"side", "explanation", "qualification"}
    if unknown:
        raise ImportFailed(f"gold has unknown keys {sorted(unknown)}", number)
    side = value.get("side")
    explanation = value.get("explanation") or ""  # null (a Parquet struct's): none
    qualification = value.get("qualification") or False
    if not isinstance(side, str) or side.strip().upper() not in ("A", "B"):
        raise ImportFailed(f"gold side={side!r} must be 'A' or 'B'", number)
    if not isinstance(explanation, str) or len(explanation) > MAX_GOLD_EXPLANATION:
        raise ImportFailed(
            f"gold explanation must be text of at most {MAX_GOLD_EXPLANATION} characters", number
        )
    if not isinstance(qualification, bool):
        raise ImportFailed("gold qualification must be true or false", number)
    return GoldMark(side.strip().upper(), explanation.strip(), qualification)


def read_records(path: Path, file_format: str) -> Iterator[PairRecord]:
    """Records of a JSON text file, read one at a time (json_stream.py); Parquet files are
    read by parquet.read_parquet_records. `mjbench-bias` (content/importing/mjbench_bias.py)
    is read here too, but offered only by `import_pairs`, which also imports its judges'
    scores."""
    if file_format not in (*TEXT_FORMATS, "mjbench-bias"):
        raise ImportFailed(f"unknown format {file_format!r}; expected one of {', '.join(FORMATS)}")
    if file_format == "native":
        for number, obj in jsonl_records(path):
            yield native_record(obj, number)
    elif file_format == "mmrb2":
        for number, obj in mmrb2_records(path):
            yield _mmrb2_pair(obj, number, default_scale=MMRB2_SCALE)
    elif file_format == "mjbench-bias":
        yield from bias_records(bias_file_rows(path))
    else:
        objects = json_list_records(path) if _starts_a_list(path) else jsonl_records(path)
        for number, obj in objects:
            yield mjbench_record(obj, number)


def _starts_a_list(path: Path) -> bool:
    try:
        with open(path, "rb") as file:
            return file.read(4096).lstrip()[:1] == b"["
    except OSError as exc:
        raise ImportFailed(f"cannot read {path.name}: {exc.strerror}") from None


def _require(obj: dict, key: str, kind: type | tuple, number: int):
    if key not in obj:
        raise ImportFailed(f"missing field {key!r}", number)
    value = obj[key]
    if not isinstance(value, kind) or isinstance(value, bool) and bool not in _as_tuple(kind):
        raise ImportFailed(f"field {key!r} has the wrong type ({type(value).__name__})", number)
    return value


def _as_tuple(kind) -> tuple:
    return kind if isinstance(kind, tuple) else (kind,)


def _external_id(obj: dict, key: str, number: int) -> str:
    value = _require(obj, key, (str, int), number)
    value = str(value).strip()
    if not value or len(value) > 255:
        raise ImportFailed(
            f"field {key!r} must be a non-empty id of at most 255 characters", number
        )
    return value


def _parts(value: object, where: str, number: int) -> list:
    if not isinstance(value, list):
        raise ImportFailed(f"{where} must be a list of [kind, value] parts", number)
    parts = []
    for index, part in enumerate(value):
        if (
            not isinstance(part, list | tuple)
            or len(part) != 2
            or part[0] not in ("text", "image")
            or not isinstance(part[1], str)
        ):
            raise ImportFailed(
                f'{where}[{index}] is not ["text", STRING] or ["image", FILE_NAME]', number
            )
        parts.append([part[0], part[1]])
    return parts


def _response(obj: dict, key: str, number: int) -> ResponseRecord:
    side = _require(obj, key, dict, number)
    model_name = _require(side, "model_name", str, number).strip()
    if not model_name:
        raise ImportFailed(f"{key}.model_name is empty", number)
    if "response_content" not in side:
        raise ImportFailed(f"missing field '{key}.response_content'", number)
    content = _parts(side["response_content"], f"{key}.response_content", number)
    if not content:
        raise ImportFailed(f"{key}.response_content is empty", number)
    groups = response_groups(side.get("groups", {}), f"{key}.groups", number)
    return ResponseRecord(model_name=model_name, content=content, groups=groups)


MAX_GROUP_ATTRIBUTES = 16


def response_groups(value: object, where: str, number: int) -> dict:
    """A response's group attributes: at most MAX_GROUP_ATTRIBUTES short names, each with a
    short text value (MJ-Bench's bias set: age, gender, race, nationality, religion)."""
    if not isinstance(value, dict):
        raise ImportFailed(f"{where} must be an object of attribute: value", number)
    if len(value) > MAX_GROUP_ATTRIBUTES:
        raise ImportFailed(f"{where} has more than {MAX_GROUP_ATTRIBUTES} attributes", number)
    groups = {}
    for name, group in value.items():
        key, text = name.strip(), group.strip() if isinstance(group, str) else ""
        if not (0 < len(key) <= 64 and 0 < len(text) <= 200) or key in groups:
            raise ImportFailed(
                f"{where}.{name[:64]!s} must be a non-empty text of at most 200 characters "
                "under its own name of at most 64",
                number,
            )
        groups[key] = text
    return groups


def _scores(value: object, scale: int, number: int) -> list[int]:
    if not isinstance(value, list):
        raise ImportFailed("human_annotations must be a list of scores", number)
    for index, score in enumerate(value):
        if not isinstance(score, int) or isinstance(score, bool):
            raise ImportFailed(f"human_annotations[{index}]={score!r} is not an integer", number)
        if not 1 <= score <= scale:
            raise ImportFailed(
                f"human_annotations[{index}]={score} is outside the scale 1..{scale}", number
            )
    return list(value)


def _grades(value: object, key: str, number: int) -> list[str]:
    if not isinstance(value, list) or not all(isinstance(g, str) and g.strip() for g in value):
        raise ImportFailed(f"human_annotations.{key} must be a list of grade letters", number)
    return [g.strip() for g in value]


def _pair_object(obj: object, number: int) -> dict:
    if not isinstance(obj, dict):
        raise ImportFailed("a pair must be a JSON object", number)
    return obj


def _mmrb2_pair(obj: object, number: int, default_scale: int) -> PairRecord:
    obj = _pair_object(obj, number)
    external_id = _external_id(obj, "id", number)
    require_storable_text(obj, number, max_chars=max_text_chars(), record_id=external_id)
    scale = obj.get("scale", default_scale)
    if not isinstance(scale, int) or isinstance(scale, bool) or not 2 <= scale <= 11:
        raise ImportFailed(f"scale={scale!r} must be an integer in 2..11", number)
    prompt_content = None
    if obj.get("prompt_content") is not None:
        prompt_content = _parts(obj["prompt_content"], "prompt_content", number)
    metadata = obj.get("prompt_metadata", {})
    if not isinstance(metadata, dict):
        raise ImportFailed("prompt_metadata must be an object", number)
    source = obj.get("prompt_source", "")
    if not isinstance(source, str):
        raise ImportFailed("prompt_source must be a string", number)
    response_a = _response(obj, "response_a", number)
    response_b = _response(obj, "response_b", number)
    chosen = obj.get("chosen", "")
    if chosen not in ("A", "B", "tie", "", None):
        raise ImportFailed(f"chosen={chosen!r} must be 'A', 'B' or 'tie'", number)

    annotations = obj.get("human_annotations", [])
    scores: list[int] = []
    if isinstance(annotations, dict):  # MMRB2 reasoning: per-response grades
        unknown = set(annotations) - {"response_a_ratings", "response_b_ratings"}
        if unknown:
            raise ImportFailed(f"human_annotations has unknown keys {sorted(unknown)}", number)
        response_a.grades = _grades(
            annotations.get("response_a_ratings", []), "response_a_ratings", number
        )
        response_b.grades = _grades(
            annotations.get("response_b_ratings", []), "response_b_ratings", number
        )
    elif annotations is not None:
        scores = _scores(annotations, scale, number)
    gold = _gold(obj.get("gold"), number)
    if gold is not None and scores:
        raise ImportFailed(
            "a gold check is answered by the annotators: it carries no human_annotations", number
        )
    return PairRecord(
        number=number,
        external_id=external_id,
        prompt_source=source,
        prompt_metadata=metadata,
        prompt_content=prompt_content,
        response_a=response_a,
        response_b=response_b,
        chosen=chosen or "",
        scores=scores,
        scale=scale,
        gold=gold,
    )


def mmrb2_record(obj: object, number: int) -> PairRecord:
    """An MMRB2 pair object (scores on 1..6 unless it says `scale`)."""
    return _mmrb2_pair(obj, number, default_scale=MMRB2_SCALE)


def native_record(obj: object, number: int) -> PairRecord:
    """An MMRB2 pair object plus the Arbiter fields of an export row."""
    record = mmrb2_record(obj, number)
    read_arbiter_fields(_pair_object(obj, number), record)
    if record.gold is not None and record.ratings:
        raise ImportFailed(
            "a gold check is answered by the annotators: it carries no ratings", number
        )
    return record


# MJ-Bench's pair shapes (all real files of its repository and its Hugging Face card):
# - alignment: {id, source, caption, image0, image1, label}; `label` = index of the preferred
#   image (0, 1, or 0.5 for a tie);
# - quality and safety captions: {caption, image_0, image_1, label_0}; `label_0` = 1 when
#   image_0 is the better one (0: image_1, 0.5: a tie);
# - scoring-model results read as pairs: {id, caption, image_0_path, image_1_path, label} or
#   the blur subset's {sharp_image, motion_blur_image}, `label` "0" | "1" | a tie value;
# - the Hugging Face card: {caption, image0, image1, label}, without an id.
# A record without an id gets one derived from its caption and image names (stable across
# files and re-imports); a numeric id is prefixed with the record's source, because MJ-Bench
# numbers the rows of each source file from 0 (hpdv2's 5 is not imagereward's 5).
MJBENCH_IMAGE_KEYS = (
    ("image0", "image1"),
    ("image_0", "image_1"),
    ("image_0_path", "image_1_path"),
    ("sharp_image", "motion_blur_image"),
)
_MJBENCH_INDEX_LABELS = {0: "A", 1: "B", 0.5: "tie", "0": "A", "1": "B", "0.5": "tie", "tie": "tie"}
_MJBENCH_LABEL_0 = {1: "A", 0: "B", 0.5: "tie"}  # label_0: is image_0 the better one?


def mjbench_images(obj: dict, number: int) -> tuple[str, str]:
    """The two image names of an MJ-Bench row, in order (image 0 = response A)."""
    for first, second in MJBENCH_IMAGE_KEYS:
        if first in obj or second in obj:
            return _require(obj, first, str, number), _require(obj, second, str, number)
    keys = " / ".join(f"{a}, {b}" for a, b in MJBENCH_IMAGE_KEYS)
    raise ImportFailed(f"no image fields: expected one of {keys}", number)


def mjbench_label(obj: dict, number: int) -> str:
    if "label" in obj:
        label = obj["label"]
        if (
            not isinstance(label, int | float | str)
            or isinstance(label, bool)
            or (label not in _MJBENCH_INDEX_LABELS)
        ):
            raise ImportFailed(f"label={label!r} must be 0, 1 or 0.5 (tie)", number)
        return _MJBENCH_INDEX_LABELS[label]
    if "label_0" in obj:
        label = obj["label_0"]
        if (
            not isinstance(label, int | float)
            or isinstance(label, bool)
            or (label not in _MJBENCH_LABEL_0)
        ):
            raise ImportFailed(f"label_0={label!r} must be 1, 0 or 0.5 (tie)", number)
        return _MJBENCH_LABEL_0[label]
    raise ImportFailed("missing field 'label' (or 'label_0')", number)


def mjbench_external_id(obj: dict, caption: str, images: tuple[str, str], number: int) -> str:
    if obj.get("id") is None:
        digest = hashlib.sha256("\0".join([caption, *images]).encode()).hexdigest()
        return f"mjbench-{digest[:16]}"
    value = _external_id(obj, "id", number)
    source = obj.get("source")
    if isinstance(obj["id"], int) and isinstance(source, str) and source.strip():
        return f"{source.strip()}-{value}"[:255]
    return value


def mjbench_record(obj: object, number: int) -> PairRecord:
    if not isinstance(obj, dict):
        raise ImportFailed("a row must be a JSON object", number)
    given_id = obj.get("id")
    record_id = str(given_id) if isinstance(given_id, str | int) else None
    require_storable_text(obj, number, max_chars=max_text_chars(), record_id=record_id)
    caption = _require(obj, "caption", str, number)
    images = mjbench_images(obj, number)
    external_id = mjbench_external_id(obj, caption, images, number)
    chosen = mjbench_label(obj, number)
    model = obj.get("model") or "unknown"
    if not isinstance(model, str):
        raise ImportFailed("model must be a string", number)
    source = obj.get("source") or "mjbench"
    if not isinstance(source, str):
        raise ImportFailed("source must be a string", number)
    metadata = {}
    for key in ("category", "subcategory"):
        if obj.get(key) is not None:
            if not isinstance(obj[key], str):
                raise ImportFailed(f"{key} must be a string", number)
            metadata[key] = obj[key]
    # Where the row came from, for matching MJ-Bench's result files to these pairs later
    # (import_verdicts --format mjbench-scores): its image names and its index in the file.
    origin = {"format": "mjbench", "image_0": images[0], "image_1": images[1], "row": number - 1}
    if obj.get("id") is None:
        origin["derived_id"] = True
    return PairRecord(
        number=number,
        external_id=external_id,
        prompt_source=source.strip(),
        prompt_metadata=metadata,
        prompt_content=[["text", caption]],
        response_a=ResponseRecord(model_name=model, content=[["image", images[0]]]),
        response_b=ResponseRecord(model_name=model, content=[["image", images[1]]]),
        chosen=chosen,
        scores=[],
        scale=None,
        metadata=metadata,
        origin=origin,
    )
