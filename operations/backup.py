"""Backup and restore of the database and the media files its rows refer to.

A backup is a new folder: the database (PostgreSQL: `pg_dump --format=custom`; SQLite: its
online backup API, a consistent copy), `media/` holding every file a row names (images, import
uploads not yet imported, export zips) at its media storage name, read from the local disk or
from the S3 bucket (core/media_store.py) a chunk at a time, and `manifest.json` with the
SHA-256 and size of each. Cleaned image copies (`assets-clean/`) are a cache, remade on
demand, and left out. The database is copied first; files are content-addressed or written
once, so a file a row created meanwhile adds is harmless.

A restore goes into an empty, never-migrated database and an empty media store (the folder, or
the bucket under its prefix). Every sum is checked before anything is written: a wrong or
missing file restores nothing.
"""

import hashlib
import json
import os
import shutil
import sqlite3
import subprocess
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from core.media_store import LocalMedia, MediaStore, media_name_allowed

MANIFEST = "manifest.json"
FORMAT = 1
_CHUNK = 1 << 20


class BackupError(Exception):
    """A backup or restore that cannot go on; the message says why, for the operator."""


@dataclass
class Database:
    """The parts of a Django DATABASES entry a backup needs."""

    engine: str  # "postgresql" | "sqlite"
    name: str
    host: str = ""
    port: str = ""
    user: str = ""
    password: str = ""
    sslmode: str = ""

    @classmethod
    def of(cls, settings_dict: dict) -> "Database":
        engine = settings_dict["ENGINE"]
        if engine.endswith("sqlite3"):
            return cls("sqlite", str(settings_dict["NAME"]))
        if engine.endswith("postgresql"):
            return cls(
                "postgresql",
                settings_dict["NAME"],
                settings_dict.get("HOST") or "",
                str(settings_dict.get("PORT") or ""),
                settings_dict.get("USER") or "",
                settings_dict.get("PASSWORD") or "",
                (settings_dict.get("OPTIONS") or {}).get("sslmode", ""),
            )
        raise BackupError(f"no backup for the database engine {engine}")

    def pg_args(self) -> list[str]:
        args = ["--dbname", self.name]
        for flag, value in (
            ("--host", self.host),
            ("--port", self.port),
            ("--username", self.user),
        ):
            if value:
                args += [flag, value]
        return args

    def pg_env(self) -> dict[str, str]:
        env = {**os.environ, "PGPASSWORD": self.password}
        if self.sslmode:
            env["PGSSLMODE"] = self.sslmode
        return env


def sha256_of(path: Path) -> str:
    digest = hashlib.sha256()
    with path.open("rb") as file:
        while chunk := file.read(_CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def referenced_files() -> list[str]:
    """Media storage names that rows name, sorted."""
    from content.models import Asset
    from exports.models import ExportJob
    from imports.models import ImportJob

    names = set(Asset.objects.values_list("file", flat=True))
    for model in (ImportJob, ExportJob):
        names.update(model.objects.exclude(file="").values_list("file", flat=True))
    return sorted(name for name in names if name)


def _run(command: list[str], env: dict) -> None:
    try:
        done = subprocess.run(command, env=env, capture_output=True, text=True, check=False)
    except FileNotFoundError:
        raise BackupError(f"{command[0]} is not installed (PostgreSQL's client tools)") from None
    if done.returncode != 0:
        raise BackupError(f"{command[0]} failed: {done.stderr.strip()[-2000:]}")


def _media(media: Path | MediaStore) -> MediaStore:
    return LocalMedia(media) if isinstance(media, Path) else media


def backup_write(out: Path, database: Database, media: Path | MediaStore, live_sqlite=None) -> dict:
    """Write a backup into the new folder `out`; the manifest. `media`: the store (a Path is
    a local media folder). `live_sqlite`: an open sqlite3 connection to copy from instead of
    the file (an in-memory database)."""
    if out.exists():
        raise BackupError(f"{out} exists: a backup goes into a new folder")
    out.mkdir(parents=True)
    try:
        return _backup_into(out, database, _media(media), live_sqlite)
    except BaseException:
        # Half a backup must not pass for one, nor block the next try with "exists".
        shutil.rmtree(out, ignore_errors=True)
        raise


def _backup_into(out: Path, database: Database, media: MediaStore, live_sqlite) -> dict:
    if database.engine == "postgresql":
        dump = out / "database.dump"
        _run(
            ["pg_dump", "--format=custom", "--file", str(dump), *database.pg_args()],
            database.pg_env(),
        )
    else:
        dump = out / "database.sqlite3"
        source = live_sqlite or sqlite3.connect(database.name)
        target = sqlite3.connect(dump)
        try:
            source.backup(target)
        finally:
            target.close()
            if live_sqlite is None:
                source.close()
    files, missing = [], []
    for name in referenced_files():
        copied = _copy_out(media, name, out / "media")
        if copied is None:
            missing.append(name)
        else:
            files.append({"path": name, **copied})
    manifest = {
        "format": FORMAT,
        "created_at": datetime.now(UTC).isoformat(timespec="seconds"),
        "database": {
            "engine": database.engine,
            "file": dump.name,
            "sha256": sha256_of(dump),
            "bytes": dump.stat().st_size,
        },
        "files": files,
        "missing": missing,  # named by a row, absent from the store when the backup ran
        "storage": media.kind,  # where the files came from: "local" or "s3"
    }
    (out / MANIFEST).write_text(json.dumps(manifest, indent=2) + "\n")
    return manifest


def _copy_out(media: MediaStore, name: str, into: Path) -> dict | None:
    """Copy one file out of the store, hashed as it streams; its sum and size, or None when
    it is not there (or its name leads outside the store)."""
    target = (into / name).resolve()
    if not target.is_relative_to(into.resolve()):
        return None
    if isinstance(media, LocalMedia):  # a symlink out of the media folder is no media file
        try:
            inside = media.path(name).resolve().is_relative_to(media.root.resolve())
        except FileNotFoundError:
            return None
        if not inside:
            return None
    digest, size = hashlib.sha256(), 0
    target.parent.mkdir(parents=True, exist_ok=True)
    try:
        with target.open("wb") as copy:
            for chunk in media.chunks(name, _CHUNK):
                digest.update(chunk)
                size += len(chunk)
                copy.write(chunk)
    except (FileNotFoundError, IsADirectoryError):
        target.unlink(missing_ok=True)
        return None
    return {"sha256": digest.hexdigest(), "bytes": size}


def backup_check(folder: Path) -> dict:
    """The manifest of a backup whose every file is present with its sum; else BackupError
    naming the first wrong one."""
    try:
        manifest = json.loads((folder / MANIFEST).read_text())
    except (OSError, ValueError) as error:
        raise BackupError(f"{folder / MANIFEST}: not a readable manifest ({error})") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise BackupError(f"{folder / MANIFEST}: not a backup of format {FORMAT}")
    try:
        entries = [("", manifest["database"])] + [("media", e) for e in manifest["files"]]
    except (KeyError, TypeError):
        raise BackupError(f"{folder / MANIFEST}: the database or the files are missing") from None
    for prefix, entry in entries:
        if not isinstance(entry, dict) or not isinstance(entry.get("sha256"), str):
            raise BackupError(f"{folder / MANIFEST}: an entry without its path and sum")
        relative = str(entry.get("file") or entry.get("path") or "")
        inside = (folder / prefix).resolve()
        path = (folder / prefix / relative).resolve()
        if not relative or not path.is_relative_to(inside) or path == inside:
            raise BackupError(f"{relative!r}: a path outside the backup's folder")
        if prefix and not media_name_allowed(relative):  # the store refuses it: refuse it now
            raise BackupError(f"{relative!r}: not a media file's name")
        if not path.is_file():
            raise BackupError(f"{relative}: missing from the backup")
        if path.stat().st_size != entry.get("bytes") or sha256_of(path) != entry["sha256"]:
            raise BackupError(f"{relative}: its SHA-256 does not match the manifest")
    return manifest


def _database_empty(database: Database) -> bool:
    if database.engine == "sqlite":
        path = Path(database.name)
        if not path.exists() or path.stat().st_size == 0:
            return True
        with sqlite3.connect(path) as connection:
            return not connection.execute("SELECT 1 FROM sqlite_master LIMIT 1").fetchall()
    import psycopg
    from psycopg.conninfo import make_conninfo

    params = {"dbname": database.name, "host": database.host or None, "port": database.port or None}
    params.update(user=database.user or None, password=database.password or None)
    if database.sslmode:
        params["sslmode"] = database.sslmode
    conninfo = make_conninfo(**{k: v for k, v in params.items() if v is not None})
    with psycopg.connect(conninfo) as connection:
        query = (
            "SELECT count(*) FROM pg_tables "
            "WHERE schemaname NOT IN ('pg_catalog', 'information_schema')"
        )
        row = connection.execute(query).fetchone()
        return row is not None and row[0] == 0  # count(*) answers one row


def backup_restore(folder: Path, database: Database, media: Path | MediaStore) -> dict:
    """Restore the backup in `folder` into an empty database and an empty media store (a
    Path is a local media folder)."""
    media = _media(media)
    manifest = backup_check(folder)
    engine = manifest["database"]["engine"]
    if engine != database.engine:
        raise BackupError(f"a {engine} backup cannot be restored into {database.engine}")
    try:
        empty = media.is_empty()
    except OSError as error:  # the bucket is missing or refuses: say so, restore nothing
        raise BackupError(f"cannot read the media store: {error}") from None
    if not empty:
        where = media.root if isinstance(media, LocalMedia) else "the media bucket (prefix)"
        raise BackupError(f"{where} is not empty: restore into an empty media store")
    if not _database_empty(database):
        raise BackupError(f"the database {database.name} is not empty: restore into a new one")
    dump = folder / manifest["database"]["file"]
    if engine == "postgresql":
        command = ["pg_restore", "--exit-on-error", "--no-owner", "--no-privileges"]
        _run([*command, *database.pg_args(), str(dump)], database.pg_env())
    else:
        Path(database.name).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(dump, database.name)
    for entry in manifest["files"]:
        # Sent up a part at a time on S3; checked above, with every other sum.
        media.put_file(entry["path"], folder / "media" / entry["path"])
    return manifest
