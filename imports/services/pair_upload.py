"""Uploaded pair files, the REST API's bulk import: `pairs_import_upload`.

An upload is a `.jsonl`/`.json` file (formats native, mmrb2, mjbench; no images), a `.parquet`
file (images inside), or a `.zip` archive holding exactly one such data file, at any depth,
plus the images it names (relative to the data file's folder, like `--images`). An Arbiter
export folder zipped as it is works too: its `manifest.json` is skipped.

The upload is treated as hostile. Its kind is checked by extension AND by its first bytes;
an archive is checked from its directory before anything is unpacked (member names, links,
member count, declared sizes, compression ratios, member kinds) and again while unpacking
(bytes are counted, so a member that lies about its size is stopped). Everything goes into a
private temporary folder that is removed however the import ends; any refusal is an
ImportFailed raised before anything reaches the database or media storage.

Limits, in settings and the environment (config/settings.py; tests set low ones):
  ARBITER_UPLOAD_MAX_BYTES           the uploaded file itself (1 GiB)
  ARBITER_UPLOAD_MAX_UNPACKED_BYTES  all members of an archive together, unpacked (4 GiB)
  ARBITER_UPLOAD_MAX_MEMBERS         entries of an archive (folders included; 100,000)
  ARBITER_UPLOAD_MAX_RATIO           unpacked : packed size of a member above 1 MiB (200)
  ARBITER_IMPORT_MAX_RECORD_BYTES    one record of the data file (16 MiB; json_stream.py)
  ARBITER_IMPORT_TEMP_DIR            where the temporary folders go (default: the system's)
The data file is then read one record at a time (json_stream.py, parquet.py).
"""

import re
import stat
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

from django.conf import settings
from django.utils.translation import gettext

from content.importing.errors import ImportFailed
from content.importing.formats import FORMATS
from content.importing.images import private_temp_folder
from imports.services.import_summary import ImportSummary
from imports.services.pair_import import Progress, pairs_import

# The limits' values are in config/settings.py. ARBITER_UPLOAD_MAX_RATIO is 200: deflate
# gives text ~10:1, images ~1:1; zeros give ~1000:1.
RATIO_CHECKED_ABOVE = 1024**2  # small members may compress absurdly well and harm nobody
CHUNK = 1024**2

DATA_SUFFIXES = (".jsonl", ".json", ".parquet")
UPLOAD_SUFFIXES = (*DATA_SUFFIXES, ".zip")
SKIPPED_NAMES = ("manifest.json",)  # an Arbiter export's manifest, not pairs
_IMAGE_SUFFIXES = {"JPEG": (".jpg", ".jpeg"), "PNG": (".png",), "GIF": (".gif",)}
_IMAGE_MAGIC = {
    "JPEG": (b"\xff\xd8\xff",),
    "PNG": (b"\x89PNG\r\n\x1a\n",),
    "GIF": (b"GIF87a", b"GIF89a"),
    "WEBP": (b"RIFF",),  # and "WEBP" at offset 8, checked below
}
_ZIP_MAGIC = (b"PK\x03\x04", b"PK\x05\x06")  # a first member, or an empty archive
_PARQUET_MAGIC = b"PAR1"
_DRIVE = re.compile(r"^[A-Za-z]:")


@dataclass(frozen=True)
class UploadLimits:
    max_bytes: int
    max_unpacked_bytes: int
    max_members: int
    max_ratio: float

    @classmethod
    def from_settings(cls) -> "UploadLimits":
        return cls(
            max_bytes=settings.ARBITER_UPLOAD_MAX_BYTES,
            max_unpacked_bytes=settings.ARBITER_UPLOAD_MAX_UNPACKED_BYTES,
            max_members=settings.ARBITER_UPLOAD_MAX_MEMBERS,
            max_ratio=settings.ARBITER_UPLOAD_MAX_RATIO,
        )


def pairs_import_upload(
    uploaded,
    *,
    project_slug: str,
    task_slug: str,
    file_format: str | None,
    as_candidates: bool = False,
) -> ImportSummary:
    """Import an uploaded file (a Django UploadedFile: .name, .size, .chunks()) all or
    nothing, like `import_pairs`. `file_format` is one of FORMATS and must fit the data file
    (parquet for a .parquet file, another for .jsonl/.json); None picks parquet or native.
    Returns the ImportSummary; raises ImportFailed (nothing written) for a refused upload or
    a bad record."""
    if file_format is not None and file_format not in FORMATS:
        raise ImportFailed(f"unknown format {file_format!r}; expected one of {', '.join(FORMATS)}")
    with private_temp_folder("arbiter-upload-") as folder:
        received = upload_store(uploaded, folder)
        return pairs_import_stored(
            received,
            project_slug=project_slug,
            task_slug=task_slug,
            file_format=file_format,
            as_candidates=as_candidates,
        )


def upload_store(uploaded, folder: Path) -> Path:
    """Stream the upload to `folder`/upload.<kind> (refused past the size limit, declared or
    counted, or when its name is not a kind Arbiter reads) and return that path."""
    suffix = _upload_suffix(getattr(uploaded, "name", "") or "")
    stored = _receive(uploaded, Path(folder) / f"upload{suffix}", UploadLimits.from_settings())
    if suffix == ".zip":
        if not _head(stored, 4).startswith(_ZIP_MAGIC):
            raise ImportFailed("the upload is named .zip but is not a zip archive")
    else:
        _check_data_magic(stored, "the uploaded file")
    return stored


def pairs_import_stored(
    stored: Path,
    *,
    project_slug: str,
    task_slug: str,
    file_format: str | None,
    as_candidates: bool = False,
    queue: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import a file upload_store wrote (a data file or a zip), unpacking it in a private
    temporary folder; the stored file itself is left as it is."""
    if file_format is not None and file_format not in FORMATS:
        raise ImportFailed(f"unknown format {file_format!r}; expected one of {', '.join(FORMATS)}")
    limits = UploadLimits.from_settings()
    with private_temp_folder("arbiter-upload-") as folder:
        if stored.suffix.lower() == ".zip":
            data_path = unpack_archive(stored, folder / "files", limits)
        else:
            _check_data_magic(stored, "the uploaded file")
            data_path = stored
        file_format = _format_for(data_path, file_format)
        zipped = stored.suffix.lower() == ".zip"
        images_dir = data_path.parent if zipped and file_format != "parquet" else None
        return pairs_import(
            data_path,
            project_slug=project_slug,
            task_slug=task_slug,
            file_format=file_format,
            images_dir=images_dir,
            as_candidates=as_candidates,
            queue=queue,
            progress=progress,
        )


def _upload_suffix(name: str) -> str:
    suffix = Path(name.replace("\\", "/")).suffix.lower()
    if suffix not in UPLOAD_SUFFIXES:
        shown = _shown(name) if name else gettext("a file without a name")
        raise ImportFailed(
            gettext("upload a .jsonl, .json, .parquet or .zip file, not %(name)s") % {"name": shown}
        )
    return suffix


def _shown(name: str) -> str:
    return repr(name if len(name) <= 200 else name[:200] + "…")


def _receive(uploaded, target: Path, limits: UploadLimits) -> Path:
    """Write the upload to `target`, refusing it past the size limit (declared or counted)."""
    declared = getattr(uploaded, "size", None)
    if declared is not None and declared > limits.max_bytes:
        raise ImportFailed(
            gettext("the upload is %(size)s bytes, above the %(limit)s limit")
            % {"size": declared, "limit": limits.max_bytes}
        )
    written = 0
    with open(target, "xb") as out:
        for chunk in uploaded.chunks():
            written += len(chunk)
            if written > limits.max_bytes:
                raise ImportFailed(
                    gettext("the upload is above the %(limit)s bytes limit")
                    % {"limit": limits.max_bytes}
                )
            out.write(chunk)
    if written == 0:
        raise ImportFailed(gettext("the uploaded file is empty"))
    return target


def _format_for(data_path: Path, file_format: str | None) -> str:
    is_parquet = data_path.suffix.lower() == ".parquet"
    if file_format is None:
        return "parquet" if is_parquet else _text_format_of(data_path)
    if is_parquet != (file_format == "parquet"):
        wanted = "parquet" if is_parquet else "native, mmrb2 or mjbench"
        raise ImportFailed(
            f"format {file_format!r} does not fit the {data_path.suffix} data file; use {wanted}"
        )
    return file_format


# MMRB2's files are one object whose first key is "pairs"; MJ-Bench's are a JSON list; Arbiter's
# own format is JSON Lines (one pair per line), which can start with neither.
_MMRB2_START = re.compile(rb'\A\s*\{\s*"pairs"\s*:')


def _text_format_of(data_path: Path) -> str:
    """The format of a JSON data file a lead uploaded "from the file", by how it begins."""
    if data_path.suffix.lower() != ".json":
        return "native"
    head = _head(data_path)
    if _MMRB2_START.match(head):
        return "mmrb2"
    if head.lstrip()[:1] == b"[":
        return "mjbench"
    return "native"


# --------------------------------------------------------------------------- magic bytes


def _head(path: Path, size: int = 4096) -> bytes:
    with open(path, "rb") as file:
        return file.read(size)


def _check_data_magic(path: Path, what: str) -> None:
    """A data file must look like what its extension says."""
    head = _head(path)
    if path.suffix.lower() == ".parquet":
        with open(path, "rb") as file:
            file.seek(0, 2)
            if file.tell() >= 8:
                file.seek(-4, 2)
                tail = file.read(4)
            else:
                tail = b""
        if not head.startswith(_PARQUET_MAGIC) or tail != _PARQUET_MAGIC:
            raise ImportFailed(f"{what} is named .parquet but is not a Parquet file")
    elif head.lstrip()[:1] not in (b"{", b"["):
        raise ImportFailed(f"{what} is named {path.suffix} but does not hold JSON")


def _image_kinds() -> dict[str, str]:
    """Allowed image suffix → format, from ARBITER_IMAGE_FORMATS."""
    kinds = {}
    for image_format in (f.upper() for f in settings.ARBITER_IMAGE_FORMATS):
        for suffix in _IMAGE_SUFFIXES.get(image_format, (f".{image_format.lower()}",)):
            kinds[suffix] = image_format
    return kinds


def _looks_like_image(head: bytes) -> bool:
    """The first bytes are those of an allowed format (Pillow checks it fully on import)."""
    allowed = {f.upper() for f in settings.ARBITER_IMAGE_FORMATS}
    for image_format in allowed:
        signatures = _IMAGE_MAGIC.get(image_format)
        if signatures is None:  # a format without a signature here: Pillow decides
            return True
        if head.startswith(signatures) and (image_format != "WEBP" or head[8:12] == b"WEBP"):
            return True
    return False


# --------------------------------------------------------------------------- archives


def unpack_archive(archive: Path, root: Path, limits: UploadLimits) -> Path:
    """Check the zip archive, unpack it under `root` and return its one data file."""
    if not _head(archive, 4).startswith(_ZIP_MAGIC):
        raise ImportFailed("the upload is named .zip but is not a zip archive")
    try:
        with zipfile.ZipFile(archive) as zf:
            members, data = _checked_members(zf, limits)
            root.mkdir()
            _extract(zf, members, root, limits)
    except ImportFailed:
        raise
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError) as exc:
        raise ImportFailed(f"the zip archive is damaged: {exc}") from None
    except (NotImplementedError, RuntimeError) as exc:  # unknown compression, encryption
        raise ImportFailed(f"the zip archive cannot be read: {exc}") from None
    except OSError as exc:  # e.g. a member named like a folder of another
        raise ImportFailed(f"the zip archive cannot be unpacked: {exc.strerror}") from None
    return root / data


def _member_problem(name: str) -> str | None:
    if "\\" in name:
        return "uses backslashes"
    if name.startswith("/"):
        return "is an absolute path"
    if _DRIVE.match(name):
        return "names a drive"
    if any(ord(char) < 32 or char == "\x7f" for char in name):
        return "holds control characters"
    parts = name.rstrip("/").split("/")
    if ".." in parts:
        return "leaves the archive's folder (..)"
    if any(part in ("", ".") for part in parts):
        return "is not a plain relative path"
    return None


def _checked_members(zf: zipfile.ZipFile, limits: UploadLimits) -> tuple[list, str]:
    """The file members to unpack and the data file's name; refuses the archive when any
    member breaks a rule. Reads only the archive's directory."""
    infos = zf.infolist()
    if len(infos) > limits.max_members:
        raise ImportFailed(
            f"the archive holds {len(infos)} entries, above the {limits.max_members} limit"
        )
    image_kinds = _image_kinds()
    seen, members, data_files, images, total = set(), [], [], 0, 0
    for info in infos:
        name = info.filename
        problem = _member_problem(name)
        if problem:
            raise ImportFailed(f"archive member {_shown(name)} {problem}")
        if name.rstrip("/") in seen:
            raise ImportFailed(f"archive member {_shown(name)} appears twice")
        seen.add(name.rstrip("/"))
        mode = info.external_attr >> 16
        if stat.S_ISLNK(mode):
            raise ImportFailed(f"archive member {_shown(name)} is a symbolic link")
        if info.is_dir():
            continue
        if stat.S_IFMT(mode) not in (0, stat.S_IFREG):
            raise ImportFailed(f"archive member {_shown(name)} is not a regular file")
        if info.flag_bits & 0x1:
            raise ImportFailed(f"archive member {_shown(name)} is encrypted")
        total += info.file_size
        if total > limits.max_unpacked_bytes:
            raise ImportFailed(
                f"the archive unpacks to more than {limits.max_unpacked_bytes} bytes"
            )
        packed = max(info.compress_size, 1)
        if info.file_size > RATIO_CHECKED_ABOVE and info.file_size > limits.max_ratio * packed:
            raise ImportFailed(
                f"archive member {_shown(name)} unpacks {info.file_size // packed}:1, above the "
                f"{limits.max_ratio}:1 limit (a zip bomb?)"
            )
        basename = name.rsplit("/", 1)[-1]
        suffix = Path(basename).suffix.lower()
        if basename in SKIPPED_NAMES:
            continue
        if suffix in DATA_SUFFIXES:
            data_files.append(name)
        elif suffix in image_kinds:
            images += 1
        else:
            raise ImportFailed(
                f"archive member {_shown(name)} is neither a data file ({', '.join(DATA_SUFFIXES)})"
                f" nor an image ({', '.join(sorted(image_kinds))})"
            )
        members.append(info)
    if len(data_files) != 1:
        found = ", ".join(_shown(n) for n in data_files[:5]) if data_files else "none"
        raise ImportFailed(
            f"the archive must hold exactly one data file ({', '.join(DATA_SUFFIXES)}); "
            f"found {len(data_files)}: {found}"
        )
    if data_files[0].lower().endswith(".parquet") and images:
        raise ImportFailed(
            "the archive holds a Parquet file and image files: a Parquet file carries its own "
            "images, upload it alone"
        )
    return members, data_files[0]


def _extract(zf: zipfile.ZipFile, members: list, root: Path, limits: UploadLimits) -> None:
    """Unpack the checked members, counting bytes: a member that unpacks to more than it
    declared, or an archive past the total limit, stops the unpacking."""
    total = 0
    for info in members:
        target = root.joinpath(*info.filename.split("/"))
        target.parent.mkdir(parents=True, exist_ok=True)
        written = 0
        with zf.open(info) as source, open(target, "xb") as out:
            while chunk := source.read(CHUNK):
                if written == 0:
                    _check_member_head(info.filename, chunk)
                written += len(chunk)
                total += len(chunk)
                if written > info.file_size or total > limits.max_unpacked_bytes:
                    raise ImportFailed(
                        f"archive member {_shown(info.filename)} unpacks to more bytes than it "
                        "declares (a zip bomb?)"
                    )
                out.write(chunk)
        if written == 0:
            raise ImportFailed(f"archive member {_shown(info.filename)} is empty")
        if Path(info.filename).suffix.lower() in DATA_SUFFIXES:
            _check_data_magic(target, f"archive member {_shown(info.filename)}")


def _check_member_head(name: str, head: bytes) -> None:
    if Path(name).suffix.lower() in DATA_SUFFIXES:
        return  # checked once the whole file is there (Parquet ends with its magic too)
    if not _looks_like_image(head):
        raise ImportFailed(f"archive member {_shown(name)} is not an image of an allowed format")
