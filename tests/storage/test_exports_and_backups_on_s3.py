"""With S3_BUCKET set, an export a worker builds is kept in the bucket and any web node
streams it down; `backup` copies the bucket's objects out with their SHA-256 sums, and
`restore` puts them into an empty bucket only once every sum checks (a tampered or missing
object restores nothing). Against moto's real S3 server (tests/object_store.py)."""

import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from content.models import Asset, Pair
from core.media_store import media_store
from exports.jobs import export_job_run, export_job_start
from exports.models import ExportJob
from operations.backup import BackupError, backup_restore
from tests.api.conftest import token_client
from tests.exporting.conftest import build_rated
from tests.factories import queued_pairs
from tests.operations.test_backup import _rows
from tests.storage.conftest import point_at

pytestmark = pytest.mark.django_db(transaction=True)  # pg_dump reads what is committed


@pytest.fixture
def exported(s3_media, settings, tmp_path):
    """A rated project and its jsonl export, built by a worker into the bucket."""
    rated = build_rated(tmp_path)
    job = export_job_start(rated.project, rated.lead, file_format="jsonl")
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.DONE, job.error
    return rated, job


def _body(answer) -> bytes:
    assert answer.streaming  # sent a chunk at a time, never read whole
    return b"".join(answer.streaming_content)


def test_an_export_is_kept_in_the_bucket_and_streamed_from_any_web_node(
    s3_media, exported, settings, tmp_path
):
    rated, job = exported
    name = f"exports/{job.pk}/exp-jsonl.zip"
    assert job.file == name and s3_media.names("exports/") == [name]
    stored = s3_media.get(name)
    assert job.size_bytes == len(stored)
    assert s3_media.local_files() == []
    settings.MEDIA_ROOT = tmp_path / "another-web-node"  # an empty local folder
    page = Client()
    page.force_login(rated.lead)
    answer = page.get(reverse("dash-export-download", args=["exp", job.pk]))
    assert answer.status_code == 200
    assert answer["Content-Length"] == str(len(stored))
    assert "exp-jsonl.zip" in answer["Content-Disposition"]
    assert _body(answer) == stored
    api = token_client(rated.lead).get(f"/api/projects/exp/exports/{job.pk}/download/")
    assert api.status_code == 200 and _body(api) == stored
    with media_store().local_copy(name) as copy, zipfile.ZipFile(copy) as archive:
        assert (
            json.loads(archive.read("manifest.json"))["counts"]["pairs"] == job.summary["pairs"] > 0
        )
    # Someone outside the project gets the answer of a project that does not exist.
    outsider = Client()
    outsider.force_login(User.objects.create_user("outsider"))
    refused = outsider.get(reverse("dash-export-download", args=["exp", job.pk]))
    missing = outsider.get(reverse("dash-export-download", args=["nope", job.pk]))
    assert refused.status_code == missing.status_code == 404


def test_a_failed_export_leaves_nothing_in_the_bucket(s3_media, settings, tmp_path):
    rated = build_rated(tmp_path)
    media_store().delete(Asset.objects.first().file.name)  # an image gone from the bucket
    job = export_job_start(rated.project, rated.lead, file_format="jsonl")
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.FAILED and "missing from media storage" in job.error
    assert s3_media.names("exports/") == []


def _stored_files(manifest) -> dict[str, str]:
    return {entry["path"]: entry["sha256"] for entry in manifest["files"]}


def test_backup_and_restore_carry_the_buckets_objects_with_their_sums(
    s3_media,
    exported,
    fresh_bucket,
    tmp_path,
    target,
):
    rated, job = exported
    out = tmp_path / "backup"
    call_command("backup", out=str(out))
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["storage"] == "s3" and manifest["missing"] == []
    names = sorted([*Asset.objects.values_list("file", flat=True), job.file])
    assert sorted(_stored_files(manifest)) == names
    for name in names:
        assert (out / "media" / name).read_bytes() == s3_media.get(name)
    assert s3_media.local_files() == []

    restored = fresh_bucket()
    backup_restore(out, target, media_store())
    assert restored.names() == names
    for name in names:
        assert restored.get(name) == s3_media.get(name)
    assert _rows(target, "annotation_pair") == Pair.objects.count() > 0
    # A bucket that is not empty any more takes no second restore.
    with pytest.raises(BackupError, match="not empty"):
        backup_restore(out, target, media_store())


@pytest.mark.parametrize("damage", ["tampered", "missing"])
def test_a_tampered_or_missing_object_in_the_backup_restores_nothing(
    s3_media,
    exported,
    fresh_bucket,
    tmp_path,
    target,
    damage,
):
    out = tmp_path / "backup"
    call_command("backup", out=str(out))
    victim = next(p for p in sorted((out / "media" / "assets").rglob("*")) if p.is_file())
    if damage == "tampered":
        data = bytearray(victim.read_bytes())
        data[len(data) // 2] ^= 0xFF
        victim.write_bytes(bytes(data))
    else:
        victim.unlink()
    restored = fresh_bucket()
    expected = "SHA-256 does not match" if damage == "tampered" else "missing from the backup"
    with pytest.raises(BackupError, match=expected):
        backup_restore(out, target, media_store())
    assert restored.names() == []
    if target.engine == "sqlite":
        assert not Path(target.name).exists()
    else:
        assert _rows(target, "pg_tables WHERE schemaname = 'public'") == 0


def test_a_restore_into_a_bucket_that_does_not_exist_restores_nothing(
    s3_media, settings, tmp_path, target
):
    queued_pairs(tmp_path, count=1)
    out = tmp_path / "backup"
    call_command("backup", out=str(out))
    point_at(settings, s3_media.endpoint, "no-such-bucket", "")
    with pytest.raises(BackupError, match="cannot read the media store: .*NoSuchBucket"):
        backup_restore(out, target, media_store())
    if target.engine == "sqlite":
        assert not Path(target.name).exists()
    else:
        assert _rows(target, "pg_tables WHERE schemaname = 'public'") == 0
