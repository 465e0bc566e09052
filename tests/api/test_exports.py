"""Export jobs through the API: start (202), list, detail, download (409 until done); leads
only, anyone else 404. Celery runs eagerly here, so a job is done once its request commits."""

import io
import json
import zipfile

import pytest

from content.models import Pair
from exports.models import ExportJob
from tests.api.conftest import token_client


@pytest.fixture
def kept_pairs(world):
    Pair.objects.filter(project=world.alpha).update(
        status=Pair.Status.KEPT, label="A", decided_by=Pair.DecidedBy.IMPORTED
    )


def _start(client, django_capture_on_commit_callbacks, project="alpha", **body):
    with django_capture_on_commit_callbacks(execute=True) as callbacks:
        answer = client.post(f"/api/projects/{project}/exports/", body, format="json")
    return answer, callbacks


@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_a_started_export_is_done_after_commit_and_downloads(
    world, as_lead, kept_pairs, django_capture_on_commit_callbacks, file_format
):
    answer, callbacks = _start(
        as_lead, django_capture_on_commit_callbacks, format=file_format, with_verdicts=True
    )
    assert answer.status_code == 202, answer.content
    # The task is enqueued on commit, not before; once it ran, its "export.ready" event.
    assert len(callbacks) == 2
    job = answer.json()
    assert job["format"] == file_format and job["with_verdicts"] is True and job["task"] is None
    assert job["requested_by"] == "lead_a"
    assert answer["Location"] == job["url"]
    detail = as_lead.get(job["url"]).json()
    assert detail["status"] == "done" and detail["error"] == ""
    assert detail["summary"] == {"pairs": 6, "ratings": 1, "images": 12}
    assert detail["download"].endswith(f"/exports/{job['id']}/download/")
    download = as_lead.get(detail["download"])
    assert download.status_code == 200
    assert download["Content-Type"] == "application/zip"
    assert f'filename="alpha-{file_format}.zip"' in download["Content-Disposition"]
    payload = b"".join(download.streaming_content)
    download.close()
    assert len(payload) == detail["size_bytes"]
    archive = zipfile.ZipFile(io.BytesIO(payload))
    assert archive.namelist()[0] == "manifest.json" and f"t2i.{file_format}" in archive.namelist()
    assert json.loads(archive.read("manifest.json"))["options"]["with_verdicts"] is True


def test_the_list_is_paged_newest_first(world, as_lead, kept_pairs):
    for file_format in ("jsonl", "parquet", "jsonl"):
        as_lead.post("/api/projects/alpha/exports/", {"format": file_format}, format="json")
    listed = as_lead.get("/api/projects/alpha/exports/?page_size=2").json()
    assert listed["count"] == 3 and len(listed["results"]) == 2 and listed["next"]
    ids = [job["id"] for job in listed["results"]]
    assert ids == sorted(ids, reverse=True)
    assert as_lead.get(f"/api/projects/{world.alpha.pk}/exports/").json()["count"] == 3


def test_download_is_a_409_until_done(world, as_lead, kept_pairs):
    # Not committed inside the test's transaction: the job stays queued.
    job = as_lead.post("/api/projects/alpha/exports/", {}, format="json").json()
    assert job["status"] == "queued" and job["download"] is None
    answer = as_lead.get(f"/api/projects/alpha/exports/{job['id']}/download/")
    assert answer.status_code == 409 and "queued" in answer.json()["detail"]


def test_options_are_checked(world, as_lead, kept_pairs):
    bad_format = as_lead.post("/api/projects/alpha/exports/", {"format": "csv"}, format="json")
    assert bad_format.status_code == 400 and "format" in bad_format.json()
    missing = as_lead.post("/api/projects/alpha/exports/", {"task": "nope"}, format="json")
    assert missing.status_code == 400 and "nope" in missing.json()["detail"]
    assert not ExportJob.objects.exists()
    one = as_lead.post("/api/projects/alpha/exports/", {"task": "t2i"}, format="json")
    assert one.status_code == 202 and one.json()["task"] == "t2i"


@pytest.mark.parametrize("caller", ["ann_a", "outsider", "lead_b"])
def test_only_the_projects_leads_reach_its_exports(world, kept_pairs, caller):
    job = token_client(world.lead_a).post("/api/projects/alpha/exports/", {}, format="json")
    job_id = job.json()["id"]
    client = token_client(getattr(world, caller))
    base = "/api/projects/alpha/exports/"
    assert client.get(base).status_code == 404
    assert client.post(base, {}, format="json").status_code == 404
    assert client.get(f"{base}{job_id}/").status_code == 404
    assert client.get(f"{base}{job_id}/download/").status_code == 404
    assert ExportJob.objects.count() == 1


def test_a_job_of_another_project_is_404(world, as_lead, kept_pairs):
    other = token_client(world.lead_b).post("/api/projects/beta/exports/", {}, format="json")
    other_id = other.json()["id"]
    assert as_lead.get(f"/api/projects/alpha/exports/{other_id}/").status_code == 404
    assert as_lead.get(f"/api/projects/beta/exports/{other_id}/").status_code == 404
    assert as_lead.get(f"/api/projects/alpha/exports/{other_id}/download/").status_code == 404
    assert as_lead.get("/api/projects/alpha/exports/oops/").status_code == 404
