"""JSONL export: one row per line in `<task>.jsonl`, images once each in `images/`."""

import json

from exports.images import ImageFiles
from exports.rows import RowBatch
from exports.sink import FileLedger


class JsonlTaskWriter:
    def __init__(self, ledger: FileLedger, relative: str, images: ImageFiles):
        self.ledger, self.relative, self.images = ledger, relative, images
        self.sink = ledger.open(relative)

    def write(self, batch: RowBatch) -> None:
        self.images.add(batch.images.values())
        lines = "".join(json.dumps(row, ensure_ascii=False) + "\n" for row in batch.rows)
        self.sink.write(lines.encode("utf-8"))

    def close(self) -> None:
        self.ledger.record(self.relative, self.sink)

    def abort(self) -> None:
        self.sink.close()
