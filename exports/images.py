"""Image files of the export, read from media storage by the hash they are stored under.

JSONL exports copy each image once into `images/<sha256>.<ext>`; Parquet exports embed the
bytes in every row that shows the image. Either way each file's hash is checked the first time
it is read, so that a file damaged in storage stops the export instead of shipping under a
name that lies about its content."""

import hashlib
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import PurePosixPath

from django.core.files import File
from django.core.files.storage import Storage

from content.models import Asset
from exports.errors import ExportInvalid
from exports.sink import FileLedger

_LOOKUP_CHUNK = 5000  # hashes per query: far below SQLite's limit on query parameters
_CHUNK_BYTES = 1 << 20


@dataclass(frozen=True)
class ImageRef:
    sha256: str
    path: str  # in the export: images/<sha256>.<ext>
    storage_name: str  # Asset.file.name in media storage


def image_refs(shas: set[str]) -> dict[str, ImageRef]:
    """The export path and storage name of every hash, in one query per 5,000 hashes."""
    wanted = sorted(shas)
    refs: dict[str, ImageRef] = {}
    for start in range(0, len(wanted), _LOOKUP_CHUNK):
        rows = Asset.objects.filter(sha256__in=wanted[start : start + _LOOKUP_CHUNK])
        for sha256, name in rows.values_list("sha256", "file"):
            suffix = PurePosixPath(name).suffix
            refs[sha256] = ImageRef(sha256, f"images/{sha256}{suffix}", name)
    missing = shas - refs.keys()
    if missing:
        raise ExportInvalid(f"image {min(missing)} is referenced by a pair but not stored")
    return refs


def _storage() -> Storage:
    return Asset._meta.get_field("file").storage


def _open(ref: ImageRef) -> "File[bytes]":  # generic in the stubs only
    try:
        return _storage().open(ref.storage_name, "rb")
    except FileNotFoundError:
        raise ExportInvalid(
            f"image {ref.sha256} is missing from media storage ({ref.storage_name})"
        ) from None


def _check(ref: ImageRef, digest: str) -> None:
    if digest != ref.sha256:
        raise ExportInvalid(
            f"image file {ref.storage_name} does not match its hash {ref.sha256} (damaged?)"
        )


class ImageFiles:
    """JSONL: every image copied once into images/, hashed while it is copied. The files
    written so far are the record of what was copied (no set in memory)."""

    def __init__(self, ledger: FileLedger):
        self.ledger = ledger
        self.count = 0

    def add(self, refs: Iterable[ImageRef]) -> None:
        for ref in refs:
            if self.ledger.exists(ref.path):
                continue
            sink = self.ledger.open(ref.path)
            with _open(ref) as source:
                while chunk := source.read(_CHUNK_BYTES):
                    sink.write(chunk)
            self.ledger.record(ref.path, sink)
            _check(ref, sink.sha256)
            self.count += 1


class ImageBytes:
    """Parquet: the bytes of an image for each row that shows it. The set of hashes seen
    (about 100 bytes an image) counts the distinct images for the manifest."""

    def __init__(self) -> None:
        self.checked: set[str] = set()

    def read(self, ref: ImageRef) -> bytes:
        with _open(ref) as source:
            data: bytes = source.read()
        if ref.sha256 not in self.checked:
            _check(ref, hashlib.sha256(data).hexdigest())
            self.checked.add(ref.sha256)
        return data

    @property
    def count(self) -> int:
        return len(self.checked)
