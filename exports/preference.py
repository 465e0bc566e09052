"""Preference export: the experts' decided pairs in the layout reward-model and DPO trainers
read (TRL's preference type, conversational format, with its vision column `images`), one
Parquet file per task that Hugging Face `datasets` loads with the images decoded.

A row is one kept pair whose label is a side: `prompt`, `chosen` and `rejected` are message
lists (`[{"role": ..., "content": [{"type": "text", "text": ...} | {"type": "image"}, ...]}]`)
in the parts' own order, and the images those placeholders stand for are, in the same order,
in `images` (the prompt's, TRL's column), `chosen_images` and `rejected_images`.

What is left out, and why (the manifest lists each pair's id under its reason):
- `tie`: kept without a side (an imported tie);
- `dropped`: dropped by the consensus rule or a lead;
- `undecided`: no expert decided it yet (candidate, queued, in progress, complete), even when
  the project exports judge labels: a model trained on the judges' labels learns the judges,
  and their guarantee bounds a rate of disagreement, not which pairs disagree;
- `easy`: removed by the judge ensemble before any expert saw it;
- `gold`: a gold check, whose label is the lead's answer key for measuring annotators.

Images are the cleaned copies annotators and judges are shown (content/image_cleaning.py), not
the stored originals the other formats ship: a generator's name in a PNG text chunk or EXIF
field would let a model learn the label from the file instead of the pixels. Each image is
named by the hash of the bytes written (`images/<sha256>.<ext>`)."""

import hashlib
import json
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

import pyarrow as pa

from content.image_cleaning import clean_asset_bytes
from content.models import Pair
from exports.errors import ExportInvalid
from exports.images import ImageRef
from exports.parquet import RowGroupWriter
from exports.rows import RowBatch
from exports.sink import FileLedger
from projects.models import Task

SIDES = ("A", "B")

# The reason a pair of each status other than kept is left out.
_REASON: dict[str, str] = {
    Pair.Status.DROPPED: "dropped",
    Pair.Status.EASY: "easy",
    Pair.Status.GOLD: "gold",
    Pair.Status.CANDIDATE: "undecided",
    Pair.Status.QUEUED: "undecided",
    Pair.Status.IN_PROGRESS: "undecided",
    Pair.Status.COMPLETE: "undecided",
}

_PART = pa.struct([("type", pa.string()), ("text", pa.string())])
_MESSAGES = pa.list_(pa.struct([("role", pa.string()), ("content", pa.list_(_PART))]))
_IMAGES = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))

_STRING = {"dtype": "string", "_type": "Value"}
# A JSON list is `datasets`' list feature in every version from 2.x (5.x writes {"_type": "List"}
# but still reads this); "Sequence" of Image likewise.
_MESSAGES_FEATURE = [
    {"role": _STRING, "content": [{"type": _STRING, "text": _STRING}]},
]
_IMAGES_FEATURE = {"feature": {"_type": "Image"}, "_type": "Sequence"}

# (column, Arrow type, Hugging Face feature): TRL's columns first.
COLUMNS = [
    ("prompt", _MESSAGES, _MESSAGES_FEATURE),
    ("chosen", _MESSAGES, _MESSAGES_FEATURE),
    ("rejected", _MESSAGES, _MESSAGES_FEATURE),
    ("images", _IMAGES, _IMAGES_FEATURE),
    ("chosen_images", _IMAGES, _IMAGES_FEATURE),
    ("rejected_images", _IMAGES, _IMAGES_FEATURE),
    ("id", pa.string(), _STRING),
    ("task", pa.string(), _STRING),
    ("chosen_side", pa.string(), _STRING),
    ("chosen_model", pa.string(), _STRING),
    ("rejected_model", pa.string(), _STRING),
    ("decided_by", pa.string(), _STRING),
    ("scale", pa.int16(), {"dtype": "int16", "_type": "Value"}),
    ("mean", pa.float64(), {"dtype": "float64", "_type": "Value"}),
    ("span", pa.int16(), {"dtype": "int16", "_type": "Value"}),
    ("ratings", pa.int16(), {"dtype": "int16", "_type": "Value"}),
]
_IMAGE_COLUMNS = [name for name, arrow_type, _f in COLUMNS if arrow_type == _IMAGES]


def schema() -> pa.Schema:
    features = {name: feature for name, _type, feature in COLUMNS}
    metadata = {b"huggingface": json.dumps({"info": {"features": features}}).encode()}
    return pa.schema([(name, arrow_type) for name, arrow_type, _f in COLUMNS], metadata=metadata)


def writer_options() -> dict[str, Any]:
    """Image bytes stored as they are (already compressed, too large for useful statistics),
    as in exports/parquet.py."""
    image_bytes = [f"{name}.list.element.bytes" for name in _IMAGE_COLUMNS]
    others = [name for name, _t, _f in COLUMNS if name not in _IMAGE_COLUMNS]
    image_paths = [f"{name}.list.element.path" for name in _IMAGE_COLUMNS]
    return {
        "compression": {
            **dict.fromkeys([*others, *image_paths], "snappy"),
            **dict.fromkeys(image_bytes, "none"),
        },
        "write_statistics": ["id", "task", "chosen_side", "scale", "mean", "span", "ratings"],
    }


def kept_with_side(row: dict[str, Any]) -> bool:
    """A row of the preference set: kept, with the experts' side."""
    return row["status"] == Pair.Status.KEPT and row["chosen"] in SIDES


class CleanImageBytes:
    """The cleaned copy of each image, for every row that shows it. The export path of each
    image seen (about 150 bytes an image) names it and counts the distinct images."""

    def __init__(self) -> None:
        self.paths: dict[str, str] = {}  # the original's SHA-256 -> images/<cleaned SHA-256>.ext

    def read(self, ref: ImageRef) -> tuple[bytes, str]:
        try:
            data = clean_asset_bytes(ref.sha256, ref.storage_name)
        except FileNotFoundError:
            raise ExportInvalid(
                f"image {ref.sha256} is missing from media storage ({ref.storage_name})"
            ) from None
        except ValueError as exc:  # ImageTooCostly or a format that cannot be cleaned
            raise ExportInvalid(
                f"image {ref.sha256} cannot be cleaned of metadata: {exc}"
            ) from None
        path = self.paths.get(ref.sha256)
        if path is None:
            suffix = PurePosixPath(ref.path).suffix
            path = self.paths[ref.sha256] = f"images/{hashlib.sha256(data).hexdigest()}{suffix}"
        return data, path

    @property
    def count(self) -> int:
        return len(self.paths)


def left_out_pairs(task: Task) -> dict[str, list[str]]:
    """The ids of the task's pairs that are not kept, by reason, in pair order."""
    left_out: dict[str, list[str]] = defaultdict(list)
    rows = (
        Pair.objects.filter(task=task)
        .exclude(status=Pair.Status.KEPT)
        .order_by("id")
        .values_list("external_id", "status")
    )
    for external_id, status in rows.iterator(chunk_size=5000):
        left_out[_REASON.get(status, status)].append(external_id)
    return left_out


class PreferenceTaskWriter(RowGroupWriter):
    """One task's `<task>.parquet`, in row groups bounded by rows and image bytes."""

    def __init__(self, ledger: FileLedger, relative: str, images: CleanImageBytes):
        self.images = images
        self.ties: list[str] = []
        super().__init__(ledger, relative, schema(), writer_options())

    keeps = staticmethod(kept_with_side)

    def write(self, batch: RowBatch) -> None:
        for row in batch.rows:
            if not self.keeps(row):
                # Only kept rows are read (writer._write_task): one without a side is a tie.
                self.ties.append(row["id"])
                continue
            self._add(row, batch)
            if self._full():
                self._flush()

    def _message(
        self, role: str, parts: list[Any] | None, batch: RowBatch
    ) -> tuple[list[Any], list[Any]]:
        """TRL's message list for the parts, and the images its placeholders stand for."""
        content, images = [], []
        for kind, value in parts or []:
            if kind == "image":
                data, path = self.images.read(batch.images[value])
                self.image_bytes += len(data)
                content.append({"type": "image", "text": None})
                images.append({"bytes": data, "path": path})
            else:
                content.append({"type": "text", "text": value})
        return [{"role": role, "content": content}], images

    def _add(self, row: dict[str, Any], batch: RowBatch) -> None:
        sides = {"A": row["response_a"], "B": row["response_b"]}
        chosen = sides[row["chosen"]]
        rejected = sides["B" if row["chosen"] == "A" else "A"]
        prompt, prompt_images = self._message("user", row["prompt_content"], batch)
        chosen_messages, chosen_images = self._message(
            "assistant", chosen["response_content"], batch
        )
        rejected_messages, rejected_images = self._message(
            "assistant", rejected["response_content"], batch
        )
        values = {
            "prompt": prompt,
            "chosen": chosen_messages,
            "rejected": rejected_messages,
            "images": prompt_images,
            "chosen_images": chosen_images,
            "rejected_images": rejected_images,
            "id": row["id"],
            "task": row["task"],
            "chosen_side": row["chosen"],
            "chosen_model": chosen["model_name"],
            "rejected_model": rejected["model_name"],
            "decided_by": row["decided_by"],
            "scale": row["scale"],
            "mean": row["mean"],
            "span": row["span"],
            "ratings": len(row["ratings"]),
        }
        for name, value in values.items():
            self.columns[name].append(value)
        self.rows += 1

    def left_out(self, task: Task) -> dict[str, list[str]]:
        """The task's pairs not in the file, by reason (call once the rows are written)."""
        reasons = left_out_pairs(task)
        if self.ties:
            reasons["tie"] = list(self.ties)
        return dict(sorted(reasons.items()))
