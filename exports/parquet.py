"""Parquet export: one file per task, images embedded, readable by Hugging Face `datasets`.

Rows are buffered into row groups bounded by a row count and by the bytes of their images, so
memory stays flat whatever the size of the project."""

import contextlib
import json
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from content.placeholders import parts_to_text
from exports.images import ImageBytes
from exports.rows import RowBatch
from exports.sink import FileLedger

ROW_GROUP_ROWS = 500
# pyarrow holds about twice a row group while it encodes it, beside the rows' own bytes.
ROW_GROUP_IMAGE_BYTES = 32 * 1024 * 1024

_IMAGE = pa.struct([("bytes", pa.binary()), ("path", pa.string())])
_IMAGES = pa.list_(_IMAGE)

# (column, Arrow type, Hugging Face feature). MMRB2's Hugging Face layout first, in its order.
COLUMNS = [
    ("pair_id", pa.string(), "string"),
    ("prompt_text", pa.string(), "string"),
    ("prompt_images", _IMAGES, "images"),
    ("response_a_text", pa.string(), "string"),
    ("response_a_images", _IMAGES, "images"),
    ("response_b_text", pa.string(), "string"),
    ("response_b_images", _IMAGES, "images"),
    ("chosen", pa.string(), "string"),
    ("prompt_source", pa.string(), "string"),
    ("response_a_model", pa.string(), "string"),
    ("response_b_model", pa.string(), "string"),
    ("human_annotations", pa.string(), "string"),
    ("prompt_metadata", pa.string(), "string"),
    ("task", pa.string(), "string"),
    ("status", pa.string(), "string"),
    ("reference_label", pa.string(), "string"),
    ("decided_by", pa.string(), "string"),
    ("label_source", pa.string(), "string"),
    ("scale", pa.int16(), "int16"),
    ("mean", pa.float64(), "float64"),
    ("span", pa.int16(), "int16"),
    ("prompt_content", pa.string(), "string"),
    ("response_a_content", pa.string(), "string"),
    ("response_b_content", pa.string(), "string"),
    ("response_a_grades", pa.string(), "string"),
    ("response_b_grades", pa.string(), "string"),
    ("metadata", pa.string(), "string"),
    ("ratings", pa.string(), "string"),
    ("adjudication", pa.string(), "string"),
    ("verdicts", pa.string(), "string"),
]


def _feature(kind: str) -> dict[str, Any]:
    if kind == "images":
        # "Sequence" rather than the newer "List": datasets 2.x to 5.x all read it.
        return {"feature": {"_type": "Image"}, "_type": "Sequence"}
    return {"dtype": kind, "_type": "Value"}


def schema() -> pa.Schema:
    features = {name: _feature(kind) for name, _type, kind in COLUMNS}
    metadata = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([(name, arrow_type) for name, arrow_type, _kind in COLUMNS], metadata=metadata)


def writer_options() -> dict[str, Any]:
    """Image bytes are stored as they are: already compressed, never repeated within a row
    group, too large for useful statistics. Compressing, dictionary-encoding or summarising
    them would cost time and memory for nothing."""
    image_bytes = [f"{name}.list.element.bytes" for name, _t, kind in COLUMNS if kind == "images"]
    image_paths = [f"{name}.list.element.path" for name, _t, kind in COLUMNS if kind == "images"]
    scalars = [name for name, _t, kind in COLUMNS if kind != "images"]
    return {
        "compression": {
            **dict.fromkeys([*scalars, *image_paths], "snappy"),
            **dict.fromkeys(image_bytes, "none"),
        },
        "use_dictionary": [*scalars, *image_paths],
        "write_statistics": scalars,
    }


def _dumps(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False)


def _text(parts: list[Any] | None) -> str | None:
    """MMRB2's Hugging Face text column: `<image_N>` where the N-th image goes."""
    return None if parts is None else parts_to_text(parts)


class RowGroupWriter:
    """One Parquet file written in row groups bounded by rows and image bytes: a subclass adds
    each row's values to `columns` (and its images' size to `image_bytes`), then asks `_full`;
    the ledger records the file once it is closed."""

    def __init__(
        self, ledger: FileLedger, relative: str, table: pa.Schema, options: dict[str, Any]
    ):
        self.ledger, self.relative, self.schema = ledger, relative, table
        self.sink = ledger.open(relative)
        self.writer = pq.ParquetWriter(self.sink, table, **options)
        self._clear()

    def _clear(self) -> None:
        self.columns: dict[str, list[Any]] = {name: [] for name in self.schema.names}
        self.rows = 0
        self.image_bytes = 0

    def _full(self) -> bool:
        return self.rows >= ROW_GROUP_ROWS or self.image_bytes >= ROW_GROUP_IMAGE_BYTES

    def _flush(self) -> None:
        if self.rows:
            self.writer.write_batch(pa.RecordBatch.from_pydict(self.columns, schema=self.schema))
        self._clear()

    def close(self) -> None:
        self._flush()
        self.writer.close()
        self.ledger.record(self.relative, self.sink)

    def abort(self) -> None:
        with contextlib.suppress(Exception):  # the folder is removed anyway
            self.writer.close()
        self.sink.close()


class ParquetTaskWriter(RowGroupWriter):
    def __init__(self, ledger: FileLedger, relative: str, images: ImageBytes):
        self.images = images
        super().__init__(ledger, relative, schema(), writer_options())

    def _images(self, parts: list[Any] | None, batch: RowBatch) -> list[dict[str, Any]]:
        images = []
        for kind, path in parts or []:
            if kind == "image":
                data = self.images.read(batch.images[path])
                self.image_bytes += len(data)
                images.append({"bytes": data, "path": path})
        return images

    def write(self, batch: RowBatch) -> None:
        for row in batch.rows:
            self._add(row, batch)
            if self._full():
                self._flush()

    def _add(self, row: dict[str, Any], batch: RowBatch) -> None:
        a, b = row["response_a"], row["response_b"]
        values = {
            "pair_id": row["id"],
            "prompt_text": _text(row["prompt_content"]),
            "prompt_images": self._images(row["prompt_content"], batch),
            "response_a_text": _text(a["response_content"]),
            "response_a_images": self._images(a["response_content"], batch),
            "response_b_text": _text(b["response_content"]),
            "response_b_images": self._images(b["response_content"], batch),
            "chosen": row["chosen"],
            "prompt_source": row["prompt_source"],
            "response_a_model": a["model_name"],
            "response_b_model": b["model_name"],
            "human_annotations": _dumps(row["human_annotations"]),
            "prompt_metadata": _dumps(row["prompt_metadata"]),
            "task": row["task"],
            "status": row["status"],
            "reference_label": row["reference_label"],
            "decided_by": row["decided_by"],
            "label_source": row["label_source"],
            "scale": row["scale"],
            "mean": row["mean"],
            "span": row["span"],
            "prompt_content": _dumps(row["prompt_content"]),
            "response_a_content": _dumps(a["response_content"]),
            "response_b_content": _dumps(b["response_content"]),
            # A key absent from the JSONL row is a null cell; a JSON null is the text "null".
            "response_a_grades": _dumps(a["grades"]) if "grades" in a else None,
            "response_b_grades": _dumps(b["grades"]) if "grades" in b else None,
            "metadata": _dumps(row["metadata"]),
            "ratings": _dumps(row["ratings"]),
            "adjudication": _dumps(row["adjudication"]),
            "verdicts": _dumps(row["verdicts"]) if "verdicts" in row else None,
        }
        for name, value in values.items():
            self.columns[name].append(value)
        self.rows += 1
