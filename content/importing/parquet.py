"""Parquet pair files with the images inside, read batch by batch (docs/export-format.md).

Three layouts, told apart by their columns:
- Arbiter's export: the `*_content` JSON columns give the exact interleaving of text and
  images, the other JSON columns are decoded, and the row is then read like a native row.
- MMRB2's Hugging Face layout: the text's `<image_N>` placeholders say where the images go
  (content/placeholders.py); a text without any is followed by all the images.
- MJ-Bench's Hugging Face layout: `caption`, `image0`, `image1` (one image each) and `label`
  (or `label_0`), read like an MJ-Bench JSON row (formats.py).
Image columns are Hugging Face `Sequence(Image())`, list<struct<bytes, path>>. Only the bytes
are used, never the path. Each image is checked and staged on disk as its row is read, so
memory holds one batch of rows at most. Record numbers are row numbers (1-based).

A Parquet file is compressed data: a few KB of zstd can unpack to gigabytes. Before any page
is read, the metadata of every row group is checked, for each column chunk that is read:
  - it unpacks at most ARBITER_UPLOAD_MAX_RATIO : 1 (200, like a zip member) once above
    RATIO_CHECKED_ABOVE: images are stored compressed already, text packs ~3-10:1;
  - a text or JSON column holds at most `text_cell_bytes()` per row (32 bytes per character
    of ARBITER_MAX_TEXT_CHARS: several texts of the longest length, 4 bytes a character);
  - all of them together unpack to at most ARBITER_UPLOAD_MAX_UNPACKED_BYTES (4 GiB, like an
    archive).
The metadata may lie (and dictionary encoding legitimately unpacks to more than it says), so
the Arrow bytes of each batch as read are counted against the same per-row and total bounds
before its rows become Python objects. Any breach is an ImportFailed: nothing is written.
JSON cells are depth-checked before parsing, and every text obeys ARBITER_MAX_TEXT_CHARS.
"""

import hashlib
import json
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from django.conf import settings

from content.importing.errors import ImportFailed
from content.importing.formats import PairRecord, mjbench_record, mmrb2_record, native_record
from content.importing.images import ImageRejected, StagedImages
from content.importing.upload_limits import max_text_chars, require_json_depth
from content.placeholders import text_to_parts

# Rows per batch: a batch with its images is what the reader holds in memory.
BATCH_ROWS = 16
IMAGE_COLUMNS = ("prompt_images", "response_a_images", "response_b_images")
MODEL_COLUMNS = ("response_a_model", "response_b_model")
ARBITER_REQUIRED = (
    "pair_id",
    "prompt_content",
    "response_a_content",
    "response_b_content",
    *MODEL_COLUMNS,
)
# Columns of the export that hold JSON text (prompt_metadata may also be a struct).
ARBITER_JSON = (
    "prompt_metadata",
    "prompt_content",
    "response_a_content",
    "response_b_content",
    "response_a_grades",
    "response_b_grades",
    "human_annotations",
    "metadata",
    "ratings",
    "adjudication",
)
ARBITER_PLAIN = (
    "pair_id",
    "prompt_source",
    *MODEL_COLUMNS,
    "chosen",
    "scale",
    "reference_label",
    "gold",
)
HF_REQUIRED = (
    "pair_id",
    "prompt_text",
    "response_a_text",
    "response_b_text",
    *IMAGE_COLUMNS,
    *MODEL_COLUMNS,
    "chosen",
    "human_annotations",
)
HF_OPTIONAL = ("prompt_source", "prompt_metadata", "scale", "gold")
MJBENCH_REQUIRED = ("caption", "image0", "image1")
MJBENCH_OPTIONAL = ("id", "source", "label", "label_0", "category", "subcategory", "model")
MJBENCH_IMAGE_COLUMNS = ("image0", "image1")
BINARY_COLUMNS = {*IMAGE_COLUMNS, *MJBENCH_IMAGE_COLUMNS}  # not bound like text
# Decompression bounds (see the module's docstring); the limits are upload.py's settings.
RATIO_CHECKED_ABOVE = 1024**2
TEXT_BYTES_PER_CHAR = 32
TEXT_CELL_SLACK = 64 * 1024  # headers, offsets, small JSON around a text


def read_parquet_records(path: Path, staged: StagedImages) -> Iterator[PairRecord]:
    try:
        parquet = pq.ParquetFile(path, buffer_size=1 << 20)  # stream pages, not column chunks
    except (OSError, ValueError, pa.ArrowException) as exc:
        # The reader's message may quote where the file is: never show the server's path.
        problem = str(exc).replace(str(path), "the file").strip()
        raise ImportFailed(f"the file is not a readable Parquet file: {problem}") from None
    with parquet:
        names = set(parquet.schema_arrow.names)
        if set(ARBITER_REQUIRED) <= names:
            wanted = (*ARBITER_PLAIN, *ARBITER_JSON, *IMAGE_COLUMNS)
            columns = [name for name in wanted if name in names]
            bounds = _Bounds.from_settings()
            _check_metadata(parquet, columns, bounds)
            for number, row in _rows(parquet, columns, bounds):
                yield _arbiter_row(row, number, staged)
        elif set(HF_REQUIRED) <= names:
            columns = [*HF_REQUIRED, *(name for name in HF_OPTIONAL if name in names)]
            bounds = _Bounds.from_settings()
            _check_metadata(parquet, columns, bounds)
            for number, row in _rows(parquet, columns, bounds):
                yield _hugging_face_row(row, number, staged)
        elif set(MJBENCH_REQUIRED) <= names:
            columns = [*MJBENCH_REQUIRED, *(name for name in MJBENCH_OPTIONAL if name in names)]
            bounds = _Bounds.from_settings()
            _check_metadata(parquet, columns, bounds)
            for number, row in _rows(parquet, columns, bounds):
                yield _mjbench_parquet_row(row, number, staged)
        else:
            missing = sorted(set(HF_REQUIRED) - names)
            raise ImportFailed(
                f"the file has neither Arbiter's export columns ({', '.join(ARBITER_REQUIRED)}) "
                f"nor MMRB2's Hugging Face layout (missing: {', '.join(missing)})"
            )


@dataclass(frozen=True)
class _Bounds:
    max_ratio: float
    max_unpacked_bytes: int
    text_cell_bytes: int

    @classmethod
    def from_settings(cls) -> "_Bounds":
        return cls(
            max_ratio=settings.ARBITER_UPLOAD_MAX_RATIO,
            max_unpacked_bytes=settings.ARBITER_UPLOAD_MAX_UNPACKED_BYTES,
            text_cell_bytes=TEXT_BYTES_PER_CHAR * max_text_chars() + TEXT_CELL_SLACK,
        )


def _check_metadata(parquet: pq.ParquetFile, columns: list[str], bounds: _Bounds) -> None:
    """Refuse a file whose metadata says it unpacks too far, before any page is read."""
    metadata, wanted, total, first_row = parquet.metadata, set(columns), 0, 1
    for index in range(metadata.num_row_groups):
        group = metadata.row_group(index)
        for position in range(group.num_columns):
            chunk = group.column(position)
            name = chunk.path_in_schema.split(".", 1)[0]
            if name not in wanted:
                continue
            unpacked, packed = chunk.total_uncompressed_size, max(chunk.total_compressed_size, 1)
            where = f"column {name!r} of rows {first_row}..{first_row + group.num_rows - 1}"
            if unpacked > RATIO_CHECKED_ABOVE and unpacked > bounds.max_ratio * packed:
                raise ImportFailed(
                    f"{where} unpacks {unpacked // packed}:1 ({unpacked} bytes), above the "
                    f"{bounds.max_ratio}:1 limit (a Parquet bomb?)"
                )
            rows = max(group.num_rows, 1)
            if name not in BINARY_COLUMNS and unpacked > rows * bounds.text_cell_bytes:
                raise ImportFailed(f"{where} {_too_much_text(unpacked, group.num_rows, bounds)}")
            total += unpacked
            if total > bounds.max_unpacked_bytes:
                raise ImportFailed(
                    f"the Parquet file unpacks to more than {bounds.max_unpacked_bytes} bytes"
                )
        first_row += group.num_rows


def _too_much_text(size: int, rows: int, bounds: _Bounds) -> str:
    return (
        f"holds {size} bytes of text for {rows} row(s), above {bounds.text_cell_bytes} bytes "
        f"a row (ARBITER_MAX_TEXT_CHARS={max_text_chars()} characters)"
    )


def _check_batch(batch: pa.RecordBatch, first: int, bounds: _Bounds, total: int) -> int:
    """The batch's actual bytes against the bounds; returns the new running total."""
    for name, column in zip(batch.schema.names, batch.columns, strict=True):
        if name not in BINARY_COLUMNS and column.nbytes > batch.num_rows * bounds.text_cell_bytes:
            where = f"column {name!r} of rows {first}..{first + batch.num_rows - 1}"
            raise ImportFailed(f"{where} {_too_much_text(column.nbytes, batch.num_rows, bounds)}")
    total += batch.nbytes
    if total > bounds.max_unpacked_bytes:
        raise ImportFailed(
            f"the Parquet file unpacks to more than {bounds.max_unpacked_bytes} bytes", first
        )
    return total


def _rows(
    parquet: pq.ParquetFile, columns: list[str], bounds: _Bounds
) -> Iterator[tuple[int, dict]]:
    batches = parquet.iter_batches(batch_size=BATCH_ROWS, columns=columns)
    number, unpacked = 0, 0
    while True:
        try:
            batch = next(batches, None)
        except (OSError, ValueError, pa.ArrowException) as exc:
            raise ImportFailed(f"cannot read the Parquet data: {exc}", number + 1) from None
        if batch is None:
            return
        unpacked = _check_batch(batch, number + 1, bounds, unpacked)
        for row in batch.to_pylist():
            number += 1
            yield number, row


def _json_column(row: dict, name: str, number: int):
    value = row.get(name)
    if value is None or (name == "prompt_metadata" and isinstance(value, dict)):
        return value
    if not isinstance(value, str):
        raise ImportFailed(f"column {name!r} must hold JSON text", number)
    require_json_depth(value, number, f"column {name!r}: ")
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"column {name!r} is not valid JSON: {exc.msg}", number) from None


def _present(obj: dict) -> dict:
    # A null column reads like an absent field (the JSONL row would leave it out).
    return {key: value for key, value in obj.items() if value is not None}


def _arbiter_row(row: dict, number: int, staged: StagedImages) -> PairRecord:
    decoded = {name: _json_column(row, name, number) for name in ARBITER_JSON}
    obj = _present(
        {
            "id": row.get("pair_id"),
            "prompt_source": row.get("prompt_source"),
            "prompt_metadata": decoded["prompt_metadata"],
            "prompt_content": decoded["prompt_content"],
            "chosen": row.get("chosen"),
            "gold": row.get("gold"),
            "human_annotations": decoded["human_annotations"],
            "scale": row.get("scale"),
            "reference_label": row.get("reference_label"),
            "metadata": decoded["metadata"],
            "ratings": decoded["ratings"],
            "adjudication": decoded["adjudication"],
        }
    )
    for side in ("response_a", "response_b"):
        obj[side] = _present(
            {
                "model_name": row.get(f"{side}_model"),
                "response_content": decoded[f"{side}_content"],
                "grades": decoded[f"{side}_grades"],
            }
        )
    record = native_record(obj, number)
    embedded: dict[str, bytes | None] = {}
    for column in IMAGE_COLUMNS:
        for image in _image_list(row, column, number):
            path = image.get("path")
            if isinstance(path, str) and path:
                embedded.setdefault(path, image.get("bytes"))
    _stage(record, embedded, staged, number)
    return record


def _hugging_face_row(row: dict, number: int, staged: StagedImages) -> PairRecord:
    embedded: dict[str, bytes | None] = {}

    def content(prefix: str) -> list:
        text = row.get(f"{prefix}_text") or ""
        if not isinstance(text, str):
            raise ImportFailed(f"column '{prefix}_text' must hold text", number)
        column, names = f"{prefix}_images", []
        for index, image in enumerate(_image_list(row, column, number)):
            name = f"{column}[{index}]"
            embedded[name] = _image_bytes(image, name, number)
            names.append(name)
        return text_to_parts(text, names)  # the images where its <image_N> say

    annotations = row.get("human_annotations")
    if isinstance(annotations, str):
        annotations = _json_column(row, "human_annotations", number)
    prompt = content("prompt")
    obj = _present(
        {
            "id": row.get("pair_id"),
            "prompt_source": row.get("prompt_source"),
            "prompt_metadata": _json_column(row, "prompt_metadata", number),
            "prompt_content": prompt or None,
            "response_a": {
                "model_name": row.get("response_a_model"),
                "response_content": content("response_a"),
            },
            "response_b": {
                "model_name": row.get("response_b_model"),
                "response_content": content("response_b"),
            },
            "chosen": row.get("chosen"),
            "gold": row.get("gold"),
            "human_annotations": annotations,
            "scale": row.get("scale"),
        }
    )
    record = mmrb2_record(obj, number)
    _stage(record, embedded, staged, number)
    return record


def _mjbench_parquet_row(row: dict, number: int, staged: StagedImages) -> PairRecord:
    """An MJ-Bench row with its two images inside: each is named by its path when it has one
    (the names derive the id of a row without one), else by the hash of its bytes."""
    embedded: dict[str, bytes | None] = {}
    obj = _present({key: row.get(key) for key in (*MJBENCH_REQUIRED, *MJBENCH_OPTIONAL)})
    for column in MJBENCH_IMAGE_COLUMNS:
        image = row.get(column)
        if not isinstance(image, dict):
            raise ImportFailed(
                f"column {column!r} must hold an image (struct<bytes, path>)", number
            )
        data = _image_bytes(image, column, number)
        path = image.get("path")
        name = path if isinstance(path, str) and path else hashlib.sha256(data).hexdigest()[:16]
        if name in embedded:  # the same file on both sides still makes two parts
            name = f"{column}/{name}"
        embedded[name] = data
        obj[column] = name
    record = mjbench_record(obj, number)
    _stage(record, embedded, staged, number)
    return record


def _image_list(row: dict, column: str, number: int) -> list[dict]:
    images = row.get(column)
    if images is None:
        return []
    if not isinstance(images, list) or not all(isinstance(i, dict) for i in images):
        raise ImportFailed(
            f"column {column!r} must be a list of images (struct<bytes, path>)", number
        )
    return images


def _image_bytes(image: dict, name: str, number: int) -> bytes:
    data = image.get("bytes")
    if data is None:
        path = image.get("path")
        where = f" (only the path {path!r})" if path else ""
        raise ImportFailed(
            f"image {name} has no bytes{where}: images must be embedded in the file; "
            "paths are never opened",
            number,
        )
    if not isinstance(data, bytes):
        raise ImportFailed(f"image {name} must be binary data", number)
    return data


def _stage(record: PairRecord, embedded: dict, staged: StagedImages, number: int) -> None:
    """Check and stage every image the record names; its parts then name them by SHA-256."""
    contents = (record.prompt_content or [], record.response_a.content, record.response_b.content)
    for parts in contents:
        for part in parts:
            if part[0] != "image":
                continue
            name = part[1]
            if name not in embedded:
                raise ImportFailed(
                    f"image {name!r} is named by the content but is not in the image columns",
                    number,
                )
            data = _image_bytes({"bytes": embedded[name], "path": name}, repr(name), number)
            try:
                part[1] = staged.add(data, name)
            except ImageRejected as exc:
                raise ImportFailed(str(exc), number) from None
