"""An export with nothing in it says so instead of writing empty files: a task (or a
project) without a pair to export is refused before a job is queued, by the command, and by
a job whose export came out empty; in an export of several tasks an empty task gets no file,
only its line in the manifest."""

import json
from pathlib import Path

import pytest
from django.contrib.messages import get_messages
from django.urls import reverse

from content.models import Pair
from exports.errors import ExportInvalid
from exports.jobs import export_job_run, export_job_start
from exports.models import ExportJob
from exports.writer import export_dataset

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def temp_dir(settings, tmp_path) -> Path:
    settings.FILE_UPLOAD_TEMP_DIR = tmp_path / "tmp"
    settings.FILE_UPLOAD_TEMP_DIR.mkdir()
    return settings.FILE_UPLOAD_TEMP_DIR


def _nothing_decided(task_slug: str) -> None:
    Pair.objects.filter(task__slug=task_slug).update(status=Pair.Status.QUEUED)


@pytest.mark.parametrize("file_format", ["jsonl", "parquet", "mmrb2", "preference"])
def test_a_task_with_nothing_to_export_is_refused_before_a_job_is_queued(rated, file_format):
    _nothing_decided("edit")
    with pytest.raises(ExportInvalid, match="nothing to export") as refused:
        export_job_start(rated.project, rated.lead, file_format=file_format, task_slug="edit")
    assert rated.project.tasks.get(slug="edit").name in refused.value.message
    assert not ExportJob.objects.exists()


def test_the_exports_page_says_why_and_queues_nothing(client, rated):
    _nothing_decided("edit")
    client.force_login(rated.lead)
    answer = client.post(
        reverse("dash-export-start", args=[rated.project.slug]), {"format": "jsonl", "task": "edit"}
    )
    assert answer.status_code == 302
    said = [str(message) for message in get_messages(answer.wsgi_request)]
    assert any("nothing to export" in text for text in said), said
    assert not ExportJob.objects.exists()


def test_dropped_pairs_count_only_when_included_and_never_in_mmrb2(rated):
    Pair.objects.filter(task__slug="edit").update(status=Pair.Status.DROPPED)
    with pytest.raises(ExportInvalid, match="no kept pairs"):
        export_job_start(rated.project, rated.lead, task_slug="edit")
    with pytest.raises(ExportInvalid, match="nothing to export"):
        export_job_start(
            rated.project, rated.lead, task_slug="edit", file_format="mmrb2", include_dropped=True
        )
    job = export_job_start(rated.project, rated.lead, task_slug="edit", include_dropped=True)
    assert job.status == ExportJob.Status.QUEUED


def test_a_project_with_nothing_decided_exports_only_its_manifest(rated, tmp_path):
    """A whole project's export is a snapshot a lead (or a pipeline) may take at any time:
    no file for a task without pairs, the manifest saying 0 for each."""
    Pair.objects.filter(project=rated.project).update(status=Pair.Status.QUEUED)
    job = export_job_start(rated.project, rated.lead)
    assert job.status == ExportJob.Status.QUEUED
    summary = export_dataset(rated.project, tmp_path / "out")
    assert summary.pairs == 0 and set(summary.tasks) == {"t2i", "edit"}
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == ["manifest.json"]
    listed = json.loads((tmp_path / "out" / "manifest.json").read_text())["tasks"]
    assert {t["slug"]: (t["pairs"], t["file"]) for t in listed} == {
        "t2i": (0, None),
        "edit": (0, None),
    }


def test_a_job_whose_export_comes_out_empty_fails_saying_so(rated, settings):
    # Judge labels could have filled the export: the job is queued, and finds it empty.
    rated.project.judge_labels = True
    rated.project.save(update_fields=["judge_labels"])
    _nothing_decided("edit")
    job = export_job_start(rated.project, rated.lead, task_slug="edit")
    export_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == ExportJob.Status.FAILED and "nothing to export" in job.error
    assert not (Path(settings.MEDIA_ROOT) / "exports" / str(job.pk)).exists()


@pytest.mark.parametrize(("file_format", "suffix"), [("mmrb2", "json"), ("parquet", "parquet")])
def test_an_empty_task_among_others_gets_no_file(rated, tmp_path, file_format, suffix):
    _nothing_decided("edit")
    summary = export_dataset(rated.project, tmp_path / "out", file_format=file_format)
    assert summary.tasks["edit"]["pairs"] == 0 and summary.pairs > 0
    assert not (tmp_path / "out" / f"edit.{suffix}").exists()
    assert (tmp_path / "out" / f"t2i.{suffix}").exists()
