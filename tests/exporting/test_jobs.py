"""Export jobs through the service: start validates and enqueues on commit, run builds the zip
under MEDIA_ROOT/exports/<job id>/, is idempotent, and a failure keeps no file."""

import json
import zipfile
from pathlib import Path

import pytest

from content.models import Asset
from core import media_store as media_store_module
from exports import jobs as exports
from exports.errors import ExportInvalid
from exports.jobs import export_job_run, export_job_start
from exports.models import ExportJob
from tests.exporting.helpers import export_job_path

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def temp_dir(settings, tmp_path) -> Path:
    settings.FILE_UPLOAD_TEMP_DIR = tmp_path / "tmp"
    settings.FILE_UPLOAD_TEMP_DIR.mkdir()
    return settings.FILE_UPLOAD_TEMP_DIR


def _queued(rated, **options) -> ExportJob:
    """A job recorded but not run: on_commit never fires inside the test's transaction."""
    return export_job_start(rated.project, rated.lead, **options)


def _files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file())


def test_start_enqueues_on_commit_and_the_task_makes_the_zip(
    rated, settings, temp_dir, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        job = export_job_start(rated.project, rated.lead, file_format="jsonl", include_dropped=True)
        assert ExportJob.objects.get(pk=job.pk).status == "queued"  # nothing ran yet
    # The job's message; then, the job having run in it, the job's "export.ready" event.
    assert len(callbacks) == 2
    job.refresh_from_db()
    assert job.status == "done" and job.error == ""
    assert job.file == f"exports/{job.pk}/exp-jsonl.zip"
    assert job.started_at <= job.finished_at
    path = export_job_path(job)
    assert path == Path(settings.MEDIA_ROOT) / job.file
    assert job.size_bytes == path.stat().st_size
    with zipfile.ZipFile(path) as archive:
        manifest = json.loads(archive.read("manifest.json"))
        assert archive.testzip() is None
    counts = manifest["counts"]
    assert job.summary == {k: counts[k] for k in ("pairs", "ratings", "images")}
    assert counts["by_status"] == {"dropped": 1, "kept": 5}
    assert _files(Path(settings.MEDIA_ROOT) / "exports") == [f"{job.pk}/exp-jsonl.zip"]
    assert list(temp_dir.iterdir()) == []  # the temporary zip was moved, not copied


def test_one_task_in_parquet(rated):
    job = _queued(rated, file_format="parquet", task_slug="t2i", with_verdicts=True)
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done" and job.task == rated.task
    with zipfile.ZipFile(export_job_path(job)) as archive:
        assert archive.namelist() == ["manifest.json", "t2i.parquet"]
        options = json.loads(archive.read("manifest.json"))["options"]
    assert options == {"task": "t2i", "include_dropped": False, "with_verdicts": True}


def test_rerunning_a_done_job_does_nothing(rated, monkeypatch):
    job = _queued(rated)
    export_job_run(job.pk)
    done = ExportJob.objects.get(pk=job.pk)

    def must_not_run(*args, **kwargs):
        raise AssertionError("a done job was exported again")

    monkeypatch.setattr(exports, "export_archive", must_not_run)
    export_job_run(job.pk)
    again = ExportJob.objects.get(pk=job.pk)
    fields = ("status", "finished_at", "file", "size_bytes")
    assert [getattr(again, f) for f in fields] == [getattr(done, f) for f in fields]
    export_job_run(10**6)  # a job that does not exist (deleted with its project): nothing


def test_a_running_job_whose_worker_died_runs_again(rated, settings):
    job = _queued(rated)
    ExportJob.objects.filter(pk=job.pk).update(status="running")
    leftover = Path(settings.MEDIA_ROOT) / "exports" / str(job.pk) / "exp-jsonl.zip.part"
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"half")
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "done"
    assert _files(leftover.parent) == ["exp-jsonl.zip"]


def test_a_refused_export_fails_the_job_and_keeps_no_file(rated, settings, temp_dir):
    job = _queued(rated)
    Asset.objects.first().file.delete(save=False)  # an image missing from storage
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "missing from media storage" in job.error
    assert job.file == "" and job.size_bytes is None and job.finished_at
    assert export_job_path(job) is None
    assert _files(Path(settings.MEDIA_ROOT) / "exports") == []
    assert list(temp_dir.iterdir()) == []
    export_job_run(job.pk)  # a failed job is left alone
    assert ExportJob.objects.get(pk=job.pk).error == job.error


def test_a_failed_move_keeps_no_partial_file(rated, settings, temp_dir, monkeypatch):
    job = _queued(rated)

    def disk_full(src, dst):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(media_store_module.os, "replace", disk_full)  # the zip into place
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == "failed" and "No space left" in job.error
    assert _files(Path(settings.MEDIA_ROOT) / "exports") == []  # no .part either
    assert list(temp_dir.iterdir()) == []


@pytest.mark.parametrize(
    ("options", "message"),
    [({"file_format": "csv"}, "unknown format 'csv'"), ({"task_slug": "nope"}, "no task 'nope'")],
)
def test_start_refuses_bad_options(rated, options, message):
    with pytest.raises(ExportInvalid, match=message):
        export_job_start(rated.project, rated.lead, **options)
    assert not ExportJob.objects.exists()


def test_the_ready_event_names_the_format_by_its_key(rated, django_capture_on_commit_callbacks):
    """Webhooks and notifications read `format` as a machine does: `parquet`, not the label
    a page shows ("Parquet (images embedded)")."""
    from projects.events import project_event

    sent = []

    def listener(sender, kind, data, **kwargs):
        sent.append((kind, data))

    job = _queued(rated, file_format="parquet")
    project_event.connect(listener)
    try:
        with django_capture_on_commit_callbacks(execute=True):
            export_job_run(job.pk)
    finally:
        project_event.disconnect(listener)
    assert [(kind, data["format"]) for kind, data in sent] == [("export.ready", "parquet")]
