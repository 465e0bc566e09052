"""Files of the export, hashed while they are written: the manifest's checksums come without
reading any file back."""

import hashlib
import io
import json
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any


class HashingFile(io.RawIOBase):
    """A binary file opened for writing that keeps the SHA-256 and size of what went in.
    pyarrow's ParquetWriter accepts it as its sink (it needs `write` and `tell`)."""

    def __init__(self, path: Path):
        self._file = open(path, "wb")  # noqa: SIM115 (see close)
        super().__init__()
        self._hash = hashlib.sha256()
        self.size = 0

    def writable(self) -> bool:
        return True

    def write(self, data: Any) -> int:  # a bytes-like object
        view = memoryview(data).cast("B")
        self._file.write(view)
        self._hash.update(view)
        self.size += len(view)
        return len(view)

    def tell(self) -> int:
        return self.size

    def close(self) -> None:
        if not self.closed:
            self._file.close()
        super().close()

    @property
    def sha256(self) -> str:
        return self._hash.hexdigest()


class FileLedger:
    """Relative path → checksum and size of every file written so far (manifest "files").
    The entries wait in an anonymous temporary file, not in memory: an export of a million
    images needs no more memory than one of ten."""

    def __init__(self, root: Path):
        self.root = root
        self.count = 0
        self._entries = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (see close)

    def open(self, relative: str) -> HashingFile:
        path = self.root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        return HashingFile(path)

    def exists(self, relative: str) -> bool:
        return (self.root / relative).exists()

    def record(self, relative: str, sink: HashingFile) -> None:
        sink.close()
        self._entries.write(json.dumps([relative, sink.sha256, sink.size]) + "\n")
        self.count += 1

    def entries(self) -> Iterator[tuple[str, dict[str, Any]]]:
        """In the order the files were written."""
        self._entries.seek(0)
        for line in self._entries:
            relative, sha256, size = json.loads(line)
            yield relative, {"sha256": sha256, "bytes": size}

    def close(self) -> None:
        self._entries.close()
