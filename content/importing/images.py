"""Images named by pair records, from a folder (`--images DIR`) or from bytes carried by the
file itself (Parquet): safe path resolution and a strict Pillow check.

Both sources answer `check(name) -> CheckedImage`; a checked image is always a file on disk
(the folder's own, or a staged copy), so the import copies every image into media storage the
same way.
"""

import hashlib
import io
import tempfile
import warnings
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Protocol

from django.conf import settings
from PIL import Image, UnidentifiedImageError

from content.image_cleaning import image_bytes_clean
from content.image_frames import ImageTooCostly, decoded_size_check, reader_frames


class ImageRejected(ValueError):
    pass


@dataclass(frozen=True)
class CheckedImage:
    path: Path
    sha256: str
    format: str
    width: int
    height: int
    size_bytes: int


class ImageSource(Protocol):
    def check(self, name: object) -> CheckedImage: ...


class _Limits:
    """The image rules of the settings, read when an import starts (tests override them)."""

    def __init__(self):
        self.allowed_formats = {f.upper() for f in settings.ARBITER_IMAGE_FORMATS}
        self.max_pixels = settings.ARBITER_MAX_IMAGE_PIXELS
        self.max_frames = settings.ARBITER_MAX_IMAGE_FRAMES
        self.max_bytes = settings.ARBITER_MAX_IMAGE_BYTES

    def check_size(self, size: int, name: str) -> None:
        if size == 0:
            raise ImageRejected(f"image {name!r} is an empty file")
        if size > self.max_bytes:
            raise ImageRejected(f"image {name!r} is {size} bytes, above the {self.max_bytes} limit")

    def inspect(self, data: bytes, name: str) -> dict:
        return inspect_image_bytes(
            data, name, self.allowed_formats, self.max_pixels, max_frames=self.max_frames
        )


class ImageFolder(_Limits):
    """The images folder of an import (the command line's, or an unpacked upload's). Each file
    is checked once, however often it is named. Messages name the image as the record does,
    never the folder: an upload's is the server's temporary folder."""

    def __init__(self, root: Path | str | None):
        super().__init__()
        self.root = Path(root).resolve() if root else None
        self._checked: dict[str, CheckedImage] = {}

    def check(self, name: object) -> CheckedImage:
        if not isinstance(name, str) or not name.strip():
            raise ImageRejected(f"image reference {name!r} is not a file name")
        if name not in self._checked:
            self._checked[name] = self._check_file(self._resolve(name), name)
        return self._checked[name]

    def _resolve(self, name: str) -> Path:
        if self.root is None:
            raise ImageRejected(
                f"image {name!r} is named but no images came with the file: upload a zip "
                "archive holding the data file and its images"
            )
        relative = PurePosixPath(name.replace("\\", "/"))
        windows_drive = len(name) > 1 and name[1] == ":" and name[0].isalpha()
        if "\x00" in name or relative.is_absolute() or ".." in relative.parts or windows_drive:
            raise ImageRejected(f"image path {name!r} leaves the images folder")
        path = (self.root / relative).resolve()
        if not path.is_relative_to(self.root):  # a symlink pointing outside
            raise ImageRejected(f"image path {name!r} leaves the images folder")
        if not path.is_file():
            # Never the folder's path: for an upload it is the server's temporary folder.
            raise ImageRejected(
                f"image {name!r} is not among the images that came with the file (names are "
                "relative to the data file's folder)"
            )
        return path

    def _check_file(self, path: Path, name: str) -> CheckedImage:
        size = path.stat().st_size
        self.check_size(size, name)
        checked = self.inspect(path.read_bytes(), name)
        return CheckedImage(path=path, size_bytes=size, **checked)


class StagedImages(_Limits):
    """Images that arrive as bytes inside the imported file. Each distinct image is checked
    once and written once into `folder` (a private temporary folder) under its SHA-256, so
    the import holds no image bytes in memory beyond the rows being read. `add` returns the
    name under which `check` knows the image: its SHA-256."""

    def __init__(self, folder: Path):
        super().__init__()
        self.folder = Path(folder)
        self._checked: dict[str, CheckedImage] = {}

    def add(self, data: bytes, name: str) -> str:
        sha256 = hashlib.sha256(data).hexdigest()
        if sha256 not in self._checked:
            self.check_size(len(data), name)
            checked = self.inspect(data, name)
            path = self.folder / sha256
            path.write_bytes(data)
            self._checked[sha256] = CheckedImage(path=path, size_bytes=len(data), **checked)
        return sha256

    def check(self, name: object) -> CheckedImage:
        checked = self._checked.get(name) if isinstance(name, str) else None
        if checked is None:
            raise ImageRejected(f"image {name!r} was not staged")
        return checked


@contextmanager
def private_temp_folder(prefix: str) -> Iterator[Path]:
    """A temporary folder only this process user can read (mode 0700), removed however the
    block ends. Its parent is ARBITER_IMPORT_TEMP_DIR when set, else the system's."""
    parent = getattr(settings, "ARBITER_IMPORT_TEMP_DIR", None)
    with tempfile.TemporaryDirectory(prefix=prefix, dir=parent) as folder:
        yield Path(folder)


def inspect_image_bytes(
    data: bytes, name: str, allowed_formats, max_pixels: int, *, max_frames: int
) -> dict:
    """Identify, bound (its frames and their pixels, from the headers) and fully decode an
    image's first frame; any doubt is a rejection. Cleaning decodes every frame of an
    animation, so the bound counts them all (content.image_frames)."""
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("error", Image.DecompressionBombWarning)
            with Image.open(io.BytesIO(data)) as image:
                image_format = (image.format or "").upper()
                # Phones' JPEGs carry a second image (MPF): Pillow calls them MPO. They are
                # JPEG to every browser and API (the first frame); stored and sent as JPEG.
                if image_format == "MPO":
                    image_format = "JPEG"
                if image_format not in allowed_formats:
                    raise ImageRejected(
                        f"image {name!r} is {image_format or 'an unknown format'}; "
                        f"allowed: {', '.join(sorted(allowed_formats))}"
                    )
                width, height = image.size
                decoded_size_check(
                    data,
                    image_format,
                    image.size,
                    name,
                    max_pixels=max_pixels,
                    max_frames=max_frames,
                    reader_frames=reader_frames(image),
                )
                image.load()  # a full decode: truncated or corrupt data fails here
                if reader_frames(image) > 1:  # refused now, not at its first view
                    try:
                        image_bytes_clean(data)
                    except ImageTooCostly as exc:
                        raise ImageRejected(f"image {name!r} is {exc}") from None
    except ImageRejected:
        raise
    except ImageTooCostly as exc:
        raise ImageRejected(str(exc)) from None
    except (Image.DecompressionBombError, Image.DecompressionBombWarning):
        raise ImageRejected(f"image {name!r} is a decompression bomb") from None
    except UnidentifiedImageError:
        raise ImageRejected(f"{name!r} is not an image") from None
    except (OSError, SyntaxError, ValueError) as exc:
        raise ImageRejected(f"image {name!r} cannot be decoded: {exc}") from None
    return {
        "sha256": hashlib.sha256(data).hexdigest(),
        "format": image_format,
        "width": width,
        "height": height,
    }
