"""MMRB2 export: `<task>.json` exactly as MMRB2's benchmark files, `{"pairs": [PAIR, ...]}`,
with the images each pair shows in `images/`, so that MMRB2's `compute_accuracy.py
--benchmark_dir OUT` scores predictions against it unchanged.

Only kept pairs with a side go in: MMRB2's scorer compares every judgement with `chosen`, so a pair
without one (a kept tie, a dropped pair) would count every answer wrong. They are counted in
the manifest (`left_out`) instead. A PAIR holds MMRB2's fields only (`id`, `prompt_source`,
`prompt_metadata`, `prompt_content` when the prompt is known, `response_a`, `response_b`,
`chosen`, `human_annotations`), plus `scale` when the project's scale is not MMRB2's 1..6, so
that reading the file back keeps the scores' meaning."""

import json
from collections import Counter
from typing import Any

from exports.images import ImageFiles
from exports.rows import RowBatch
from exports.sink import FileLedger

MMRB2_SCALE = 6
SIDES = ("A", "B")


def mmrb2_pair(row: dict[str, Any]) -> dict[str, Any]:
    pair = {
        "id": row["id"],
        "prompt_source": row["prompt_source"],
        "prompt_metadata": row["prompt_metadata"],
    }
    if row["prompt_content"] is not None:
        pair["prompt_content"] = row["prompt_content"]
    for side in ("response_a", "response_b"):
        pair[side] = {
            "model_name": row[side]["model_name"],
            "response_content": row[side]["response_content"],
        }
    pair["chosen"] = row["chosen"]
    pair["human_annotations"] = row["human_annotations"]
    if row["scale"] != MMRB2_SCALE:
        pair["scale"] = row["scale"]
    return pair


def _image_paths(pair: dict[str, Any]) -> set[str]:
    parts = [*(pair.get("prompt_content") or [])]
    for side in ("response_a", "response_b"):
        parts += pair[side]["response_content"] or []
    return {value for kind, value in parts if kind == "image"}


class Mmrb2TaskWriter:
    """Streams one task's `{"pairs": [...]}`: rows are written as they come, never all held."""

    def __init__(self, ledger: FileLedger, relative: str, images: ImageFiles):
        self.ledger, self.images, self.relative = ledger, images, relative
        self.sink = ledger.open(self.relative)
        self.sink.write(b'{"pairs": [')
        self.written = 0
        self.left_out: Counter[str] = Counter()

    @staticmethod
    def keeps(row: dict[str, Any]) -> bool:
        return row["status"] == "kept" and row["chosen"] in SIDES

    def write(self, batch: RowBatch) -> None:
        chunks, shown = [], set()
        for row in batch.rows:
            if not self.keeps(row):
                self.left_out["dropped" if row["status"] == "dropped" else "no_side"] += 1
                continue
            pair = mmrb2_pair(row)
            shown |= _image_paths(pair)
            separator = ", " if self.written else ""
            chunks.append(separator + json.dumps(pair, ensure_ascii=False))
            self.written += 1
        self.images.add(batch.images[path] for path in sorted(shown))
        self.sink.write("".join(chunks).encode("utf-8"))

    def close(self) -> None:
        self.sink.write(b"]}\n")
        self.ledger.record(self.relative, self.sink)

    def abort(self) -> None:
        self.sink.close()
