"""Media storage as every node sees it: the local disk under MEDIA_ROOT, or an S3-compatible
bucket (config/object_storage.py). Everything that keeps or reads a media file by its name
(images and their cleaned copies, import uploads, export zips, backups) goes through
`media_store()`, never through a path under MEDIA_ROOT, so that a file one node wrote is read by
another with an empty local folder.

Memory stays bounded by a chunk: files go up from a local scratch file (multipart above
8 MiB on S3) and come down as a stream of chunks, or into a scratch file that lives for one
call. Names are the relative, slash-separated names the rows keep.
"""

import hashlib
import mimetypes
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path, PurePosixPath

from django.conf import settings
from django.core.exceptions import ImproperlyConfigured
from django.core.files.storage import FileSystemStorage, storages
from django.http import FileResponse

CHUNK = 1 << 20  # bytes read or sent at a time
_PART = 8 << 20  # multipart part size on S3


class MediaStoreError(OSError):
    """The object store refused or could not be reached; the message names no key."""


def _checked(name: str) -> str:
    """A relative name without '..': names come from rows, but a row is no proof."""
    parts = PurePosixPath(name).parts
    if not name or name.startswith("/") or ".." in parts or "\\" in name:
        raise FileNotFoundError(name)
    return name


def media_name_allowed(name: str) -> bool:
    """Whether `name` is one the store would read or write (a backup's manifest is checked
    with it before a restore writes anything)."""
    try:
        _checked(name)
    except FileNotFoundError:
        return False
    return True


class LocalMedia:
    """Files under a folder; writes land atomically (a temporary file renamed into place)."""

    kind = "local"

    def __init__(self, root: Path | str):
        self.root = Path(root)

    def path(self, name: str) -> Path:
        return self.root / _checked(name)

    def exists(self, name: str) -> bool:
        return self.path(name).is_file()

    def size(self, name: str) -> int:
        return self.path(name).stat().st_size

    def chunks(self, name: str, chunk: int = CHUNK) -> Iterator[bytes]:
        with self.path(name).open("rb") as handle:
            while data := handle.read(chunk):
                yield data

    def read(self, name: str) -> bytes:
        return self.path(name).read_bytes()

    def put_bytes(self, name: str, data: bytes) -> None:
        self._into_place(name, lambda part: part.write_bytes(data))

    def put_file(self, name: str, source: Path, *, move: bool = False) -> None:
        if move:
            self._into_place(name, lambda part: shutil.move(source, part))
        else:
            self._into_place(name, lambda part: shutil.copyfile(source, part))

    def _into_place(self, name: str, write, chmod: bool = True) -> None:
        target = self.path(name)
        target.parent.mkdir(parents=True, exist_ok=True)
        handle, part = tempfile.mkstemp(dir=target.parent, prefix=".part-")
        os.close(handle)
        try:
            write(Path(part))
            if chmod and settings.FILE_UPLOAD_PERMISSIONS is not None:
                os.chmod(part, settings.FILE_UPLOAD_PERMISSIONS)
            os.replace(part, target)
        except BaseException:
            Path(part).unlink(missing_ok=True)
            raise

    def link(self, source: str, name: str) -> bool:
        """Hard-link `name` to `source` (no extra disk for identical bytes); False when the
        file system cannot."""

        def link(part: Path) -> None:
            part.unlink()
            os.link(self.path(source), part)

        try:
            self._into_place(name, link, chmod=False)  # the mode is the original's
        except OSError:
            return False
        return True

    def delete(self, name: str) -> None:
        self.path(name).unlink(missing_ok=True)

    def delete_folder(self, folder: str) -> None:
        shutil.rmtree(self.path(folder.strip("/")), ignore_errors=True)

    def is_empty(self) -> bool:
        return not self.root.exists() or not any(self.root.iterdir())

    @contextmanager
    def local_copy(self, name: str, scratch: Path | str | None = None) -> Iterator[Path]:
        """The file itself: nothing to copy on the local disk."""
        path = self.path(name)
        if not path.is_file():
            raise FileNotFoundError(name)
        yield path

    def response(self, name: str, **options) -> FileResponse:
        return FileResponse(self.path(name).open("rb"), **options)


class S3Media:
    """Objects in the bucket of a django-storages S3Storage, under its prefix (S3_PREFIX)."""

    kind = "s3"

    def __init__(self, storage):
        self.storage = storage
        self.bucket = storage.bucket  # a boto3 Bucket resource with the storage's credentials
        from boto3.s3.transfer import TransferConfig

        self.transfer = TransferConfig(
            multipart_threshold=_PART, multipart_chunksize=_PART, max_concurrency=2
        )

    @contextmanager
    def _refusals(self, what: str) -> Iterator[None]:
        """The store's errors as FileNotFoundError (a missing object) or MediaStoreError."""
        from boto3.exceptions import Boto3Error
        from botocore.exceptions import BotoCoreError, ClientError

        try:
            yield
        except ClientError as error:
            if _missing(error):
                raise FileNotFoundError(what) from None
            code = error.response.get("Error", {}).get("Code", "an error")
            raise MediaStoreError(f"the media bucket answered {code} for {what}") from None
        except (BotoCoreError, Boto3Error) as error:
            raise MediaStoreError(
                f"the media bucket failed for {what}: {type(error).__name__}"
            ) from None

    def key(self, name: str) -> str:
        return self.storage._normalize_name(_checked(name))

    def _prefix(self, folder: str = "") -> str:
        location = self.storage.location.strip("/")
        folder = folder.strip("/")
        return "/".join(part for part in (location, folder) if part) + (
            "/" if folder or location else ""
        )

    def exists(self, name: str) -> bool:
        return self._head(name) is not None

    def size(self, name: str) -> int:
        head = self._head(name)
        if head is None:
            raise FileNotFoundError(name)
        return head["ContentLength"]

    def _head(self, name: str) -> dict | None:
        try:
            with self._refusals(name):
                client = self.bucket.meta.client
                return client.head_object(Bucket=self.bucket.name, Key=self.key(name))
        except FileNotFoundError:
            return None

    def _get(self, name: str) -> dict:
        with self._refusals(name):
            return self.bucket.meta.client.get_object(Bucket=self.bucket.name, Key=self.key(name))

    def chunks(self, name: str, chunk: int = CHUNK) -> Iterator[bytes]:
        body = self._get(name)["Body"]
        try:
            yield from body.iter_chunks(chunk)
        finally:
            body.close()

    def read(self, name: str) -> bytes:
        body = self._get(name)["Body"]
        try:
            return body.read()
        finally:
            body.close()

    def _extra(self, name: str) -> dict:
        return {"ContentType": mimetypes.guess_type(name)[0] or "application/octet-stream"}

    def put_bytes(self, name: str, data: bytes) -> None:
        with self._refusals(name):
            self.bucket.put_object(Key=self.key(name), Body=data, **self._extra(name))

    def put_file(self, name: str, source: Path, *, move: bool = False) -> None:
        # upload_file sends parts of _PART bytes read from the file: bounded memory.
        with self._refusals(name):
            self.bucket.upload_file(
                str(source), self.key(name), ExtraArgs=self._extra(name), Config=self.transfer
            )
        if move:
            Path(source).unlink(missing_ok=True)

    def delete(self, name: str) -> None:
        with self._refusals(name):
            self.bucket.Object(self.key(name)).delete()

    def delete_folder(self, folder: str) -> None:
        with self._refusals(folder):
            self.bucket.objects.filter(Prefix=self._prefix(_checked(folder.strip("/")))).delete()

    def is_empty(self) -> bool:
        with self._refusals("the listing"):
            return not list(self.bucket.objects.filter(Prefix=self._prefix()).limit(1))

    @contextmanager
    def local_copy(self, name: str, scratch: Path | str | None = None) -> Iterator[Path]:
        """The object downloaded, a chunk at a time, into a private folder (mode 0700) under
        `scratch` (the system's temporary folder by default) for the caller's block only."""
        folder = Path(tempfile.mkdtemp(prefix="arbiter-media-", dir=scratch))
        try:
            path = folder / PurePosixPath(_checked(name)).name
            with path.open("wb") as handle:
                for data in self.chunks(name):
                    handle.write(data)
            yield path
        finally:
            shutil.rmtree(folder, ignore_errors=True)

    def response(self, name: str, **options) -> FileResponse:
        """Streamed from the bucket a chunk at a time, never whole in memory or on disk."""
        found = self._get(name)
        response = FileResponse(found["Body"], **options)
        response.block_size = CHUNK
        response["Content-Length"] = str(found["ContentLength"])
        return response


def _missing(error) -> bool:
    code = str(error.response.get("Error", {}).get("Code", ""))
    return code in ("404", "NoSuchKey", "NotFound")


MediaStore = LocalMedia | S3Media


def media_store() -> MediaStore:
    """The media store the settings name (STORAGES["default"])."""
    storage = storages["default"]  # rebuilt by Django when a test changes STORAGES
    if isinstance(storage, FileSystemStorage):
        return LocalMedia(str(storage.location))
    from storages.backends.s3 import S3Storage

    if isinstance(storage, S3Storage):
        return S3Media(storage)
    raise ImproperlyConfigured(f"media storage {type(storage).__name__} is not supported")


def media_response(name: str, **options) -> FileResponse | None:
    """The file streamed (FileResponse options: content_type, as_attachment, filename), or
    None when it is not there."""
    try:
        return media_store().response(name, **options)
    except FileNotFoundError:
        return None


def sha256_chunks(chunks: Iterator[bytes]) -> str:
    digest = hashlib.sha256()
    for data in chunks:
        digest.update(data)
    return digest.hexdigest()
