"""`manage.py backup` and `restore`: the database and the media files its rows name, with a
manifest of SHA-256 sums; a restore into an empty database and media folder gives back every
row and file, and a wrong sum restores nothing (operations/backup.py). On whichever database
the suite runs: SQLite in the embedded pass, PostgreSQL (pg_dump / pg_restore) in the other."""

import sqlite3
from pathlib import Path

import psycopg
import pytest
from django.core.management import CommandError, call_command
from django.db import connection

from content.models import Asset, Pair
from operations.backup import BackupError, Database, backup_restore
from tests.factories import queued_pairs

pytestmark = pytest.mark.django_db(transaction=True)  # pg_dump reads what is committed


def _admin():
    s = connection.settings_dict
    return psycopg.connect(
        host=s["HOST"] or None, port=s["PORT"] or None, user=s["USER"] or None,
        password=s["PASSWORD"] or None, dbname="postgres", autocommit=True,
    )  # fmt: skip


@pytest.fixture
def target(tmp_path):
    """An empty, never-migrated database of the suite's engine."""
    source = Database.of(connection.settings_dict)
    if source.engine == "sqlite":
        yield Database("sqlite", str(tmp_path / "restored.sqlite3"))
        return
    name = f"{source.name}_restored"[:63]
    with _admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    yield Database(**{**source.__dict__, "name": name})
    with _admin() as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')


def _rows(database: Database, table: str) -> int:
    query = f"SELECT count(*) FROM {table}"
    if database.engine == "sqlite":
        with sqlite3.connect(database.name) as db:
            return db.execute(query).fetchone()[0]
    s = connection.settings_dict
    with psycopg.connect(
        host=s["HOST"] or None, port=s["PORT"] or None, user=s["USER"] or None,
        dbname=database.name,
    ) as db:  # fmt: skip
        return db.execute(query).fetchone()[0]


def _assert_nothing_restored(target: Database, media: Path) -> None:
    assert not media.exists()
    if target.engine == "sqlite":
        assert not Path(target.name).exists()
    else:
        assert _rows(target, "pg_tables WHERE schemaname = 'public'") == 0


def _backup(tmp_path, settings) -> Path:
    queued_pairs(tmp_path, count=3)
    out = tmp_path / "backup"
    call_command("backup", out=str(out))
    return out


def test_a_restore_gives_back_every_row_and_file(tmp_path, settings, target):
    out = _backup(tmp_path, settings)
    files = sorted(p.relative_to(out / "media") for p in (out / "media").rglob("*") if p.is_file())
    assert [str(f) for f in files] == sorted(Asset.objects.values_list("file", flat=True))

    media = tmp_path / "restored-media"
    manifest = backup_restore(out, target, media)
    assert len(manifest["files"]) == Asset.objects.count() > 0
    assert _rows(target, "annotation_pair") == Pair.objects.count() == 3
    assert _rows(target, "annotation_asset") == Asset.objects.count()
    for asset in Asset.objects.all():
        original = Path(settings.MEDIA_ROOT) / asset.file.name
        assert (media / asset.file.name).read_bytes() == original.read_bytes()


def test_a_wrong_sum_restores_nothing(tmp_path, settings, target):
    out = _backup(tmp_path, settings)
    victim = next(p for p in (out / "media").rglob("*") if p.is_file())
    data = bytearray(victim.read_bytes())
    data[len(data) // 2] ^= 0xFF
    victim.write_bytes(bytes(data))
    media = tmp_path / "restored-media"
    with pytest.raises(BackupError, match="SHA-256 does not match"):
        backup_restore(out, target, media)
    _assert_nothing_restored(target, media)


def test_a_database_that_is_not_empty_is_refused(tmp_path, settings, target):
    out = _backup(tmp_path, settings)
    backup_restore(out, target, tmp_path / "first")
    with pytest.raises(BackupError, match="not empty"):
        backup_restore(out, target, tmp_path / "second")
    assert not (tmp_path / "second").exists()


def test_a_backup_goes_into_a_new_folder_and_a_manifest_path_stays_inside(tmp_path, settings):
    out = _backup(tmp_path, settings)
    with pytest.raises(CommandError, match="exists"):
        call_command("backup", out=str(out))
    manifest = (out / "manifest.json").read_text()
    first = manifest.split('"path": "', 1)[1].split('"', 1)[0]
    (out / "manifest.json").write_text(manifest.replace(first, "../../../etc/passwd", 1))
    with pytest.raises(BackupError, match="outside"):
        backup_restore(out, Database("sqlite", str(tmp_path / "x.sqlite3")), tmp_path / "m")


def test_a_media_name_the_store_would_refuse_restores_nothing(tmp_path, settings, target):
    """`assets/../assets/x` stays inside the backup's folder but is no media name: refused
    before the database is restored, not half-way through the files."""
    out = _backup(tmp_path, settings)
    manifest = (out / "manifest.json").read_text()
    first = manifest.split('"path": "', 1)[1].split('"', 1)[0]
    top, rest = first.split("/", 1)
    (out / "manifest.json").write_text(manifest.replace(first, f"{top}/../{top}/{rest}", 1))
    media = tmp_path / "restored-media"
    with pytest.raises(BackupError, match="not a media file's name"):
        backup_restore(out, target, media)
    _assert_nothing_restored(target, media)


@pytest.mark.parametrize(
    "entry", ['"not an entry"', '{"path": "x.png"}', '{"path": "x.png", "sha256": 7}']
)
def test_a_malformed_manifest_entry_is_refused_by_name(tmp_path, settings, entry):
    out = _backup(tmp_path, settings)
    manifest = (out / "manifest.json").read_text()
    files_at = manifest.index('"files": [') + len('"files": [')
    (out / "manifest.json").write_text(f"{manifest[:files_at]}{entry}, {manifest[files_at:]}")
    with pytest.raises(BackupError, match="without its path and sum"):
        backup_restore(out, Database("sqlite", str(tmp_path / "x.sqlite3")), tmp_path / "m")


def test_a_backup_that_fails_leaves_no_folder_behind(tmp_path, settings, monkeypatch):
    from operations import backup

    queued_pairs(tmp_path, count=1)

    def disk_full(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(backup, "_copy_out", disk_full)  # copying a media file out
    out = tmp_path / "backup"
    with pytest.raises(OSError, match="No space"):
        call_command("backup", out=str(out))
    assert not out.exists()  # the next try is not refused with "exists"


def test_the_audit_trail_survives_a_backup_and_a_restore(tmp_path, settings, target):
    """The trail lives in the database, so the backup carries it: a failed sign-in recorded
    before the backup is in the restored database, with its address."""
    from django.contrib.auth.models import User
    from django.test import Client

    from audit.models import AuditEntry

    User.objects.create_user("ada", password="pw-right-1")
    Client().post("/accounts/login/", {"username": "ada", "password": "wrong-pw-1"},
                  REMOTE_ADDR="203.0.113.9")  # fmt: skip
    out = _backup(tmp_path, settings)  # its import records the project and the task too
    entries = AuditEntry.objects.count()
    backup_restore(out, target, tmp_path / "restored-media")
    assert _rows(target, "audit_auditentry") == entries >= 3
    failed = "audit_auditentry WHERE kind = 'sign_in_failed' AND remote_addr = '203.0.113.9'"
    assert _rows(target, failed) == 1
