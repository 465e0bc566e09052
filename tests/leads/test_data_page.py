"""A lead brings pairs in from the page (a background import with counters) and chooses how
they reach annotators: straight to the queue, or as candidates for the ensemble filter."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.core.management import call_command
from django.urls import reverse
from rest_framework.test import APIClient

from content.models import Pair
from imports.models import ImportJob
from imports.services.import_jobs import import_job_run, import_job_start
from projects.models import Project, Task
from tests.factories import image_bytes, member

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("tasks_in_process", "lead_signs_in"),
]


def _record(i: int, image_b: str | None = None, prefix: str = "p") -> dict:
    return {
        "id": f"{prefix}{i}",
        "prompt_content": [["text", f"Draw {i}"]],
        "response_a": {"model_name": "m1", "response_content": [["image", f"img/a{i}.png"]]},
        "response_b": {
            "model_name": "m2",
            "response_content": [["image", image_b or f"img/b{i}.png"]],
        },
    }


def pairs_zip(count: int = 3, broken_at: int | None = None, prefix: str = "p") -> bytes:
    """A zip of a JSONL file and its images; record `broken_at` (1-based) names a missing one."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        lines = []
        for i in range(count):
            missing = "img/missing.png" if broken_at == i + 1 else None
            lines.append(json.dumps(_record(i, missing, prefix)))
            archive.writestr(f"img/a{i}.png", image_bytes(color=(i * 40 + 10, 0, 0)))
            archive.writestr(f"img/b{i}.png", image_bytes(color=(0, i * 40 + 10, 0)))
        archive.writestr("pairs.jsonl", "\n".join(lines) + "\n")
    return buffer.getvalue()


@pytest.fixture
def project():
    return Project.objects.create(slug="data", name="Data")


@pytest.fixture
def committed(django_capture_on_commit_callbacks):
    """Jobs are enqueued when their transaction commits; a test's never does, so the
    callbacks run at the end of each upload, as a commit would."""
    return lambda: django_capture_on_commit_callbacks(execute=True)


@pytest.fixture
def upload_page(client, committed):
    def upload(data: bytes, **fields):
        upload = SimpleUploadedFile("pairs.zip", data, content_type="application/zip")
        new_task = {"task": "+new", "new_task": "t2i"}  # the page's "New task…" choice
        values = {**new_task, "destination": "queue", "file_format": "", **fields}
        with committed():
            return client.post(reverse("project-data", args=["data"]), {**values, "file": upload})

    return upload


@pytest.fixture
def start(committed):
    def start(project, lead, data: bytes, task_slug: str, **options) -> ImportJob:
        with committed():
            job = import_job_start(
                project, lead, SimpleUploadedFile("p.zip", data), task_slug=task_slug, **options
            )
        job.refresh_from_db()
        return job

    return start


def test_a_zip_with_images_is_imported_and_queued(client, lead, settings, upload_page):
    answer = upload_page(pairs_zip(3))
    assert answer.status_code == 302
    job = ImportJob.objects.get()
    assert job.status == "done" and job.pairs_written == 3 and job.records_checked == 3
    assert job.images_checked == 6 and job.error == "" and job.file == ""
    assert not (settings.MEDIA_ROOT / "imports" / str(job.pk)).exists()  # upload removed
    task = Task.objects.get(slug="t2i")
    assert task.aspects  # a new task of a known kind gets its default aspects
    assert set(Pair.objects.values_list("status", flat=True)) == {"queued"}
    page = client.get(reverse("project-data", args=["data"])).content.decode()
    assert "3 records: 3 new pairs" in page and "pairs.zip" in page


def test_candidates_wait_for_the_filter_until_the_lead_queues_them(client, lead, upload_page):
    upload_page(pairs_zip(2), destination="candidates")
    assert set(Pair.objects.values_list("status", flat=True)) == {"candidate"}
    page = client.get(reverse("project-data", args=["data"])).content.decode()
    assert "Send 2 to annotation" in page
    answer = client.post(reverse("project-queue", args=["data"]), {"task": "t2i"})
    assert answer.status_code == 302
    assert set(Pair.objects.values_list("status", flat=True)) == {"queued"}


def test_a_bad_record_is_refused_with_its_number_and_nothing_is_written(client, lead, upload_page):
    upload_page(pairs_zip(4, broken_at=3))
    job = ImportJob.objects.get()
    assert job.status == "failed" and job.error_record == 3
    assert "missing.png" in job.error
    assert not Pair.objects.exists()
    page = client.get(reverse("project-data", args=["data"])).content.decode()
    assert "Refused at record 3" in page and "Nothing was written" in page


def test_a_file_that_is_no_zip_is_refused_at_upload(client, lead, settings, upload_page):
    answer = upload_page(b"not a zip at all")
    assert answer.status_code == 400
    assert "file" in answer.context["form"].errors
    assert "not a zip archive" in answer.context["form"].errors["file"][0]
    assert not ImportJob.objects.exists() and not Pair.objects.exists()
    assert not any((settings.MEDIA_ROOT / "imports").glob("*/*"))  # the upload is gone


def test_progress_is_written_while_records_are_checked(lead, project, monkeypatch, start):
    from imports.services import import_jobs

    seen = []
    real = import_jobs._progress_writer

    def recording(job_id):
        write = real(job_id)

        def both(records, images):
            write(records, images)
            seen.append(ImportJob.objects.values_list("records_checked", flat=True).get())

        return both

    monkeypatch.setattr(import_jobs, "_progress_writer", recording)
    monkeypatch.setattr(import_jobs, "PROGRESS_EVERY_SECONDS", 0)
    start(project, lead, pairs_zip(3), "t2i")
    assert seen == [1, 2, 3]  # each record counted in the row as it was checked


def test_a_finished_job_runs_no_second_time(lead, project, start):
    job = start(project, lead, pairs_zip(1), "t")
    assert job.status == "done"
    Pair.objects.all().delete()
    import_job_run(job.pk)  # a redelivered message
    assert not Pair.objects.exists()


def test_queue_pairs_command_and_api(project, lead, start):
    task = Task.objects.create(project=project, slug="t", name="T")
    start(project, lead, pairs_zip(2, prefix="t"), "t", queue=False)
    assert Pair.objects.filter(status="candidate").count() == 2
    out = io.StringIO()
    call_command("queue_pairs", "--project", "data", "--task", "t", stdout=out)
    assert "2 pairs queued" in out.getvalue()
    assert Pair.objects.filter(task=task, status="queued").count() == 2

    start(project, lead, pairs_zip(2, prefix="u"), "u", queue=False)
    api = APIClient()
    api.force_authenticate(lead)
    answer = api.post("/api/projects/data/queue/", {"task": "nope"}, format="json")
    assert answer.status_code == 400 and "task" in answer.json()
    answer = api.post("/api/projects/data/queue/", {}, format="json")
    assert answer.status_code == 200 and answer.json() == {"queued": 2}


def test_the_queue_api_is_for_the_projects_leads_only(project, lead):
    outsider_project = Project.objects.create(slug="other", name="Other")
    outsider = member("outsider", outsider_project, role="lead")
    annotator = member("rater", project)
    for user in (outsider, annotator):
        api = APIClient()
        api.force_authenticate(user)
        assert api.post("/api/projects/data/queue/", {}, format="json").status_code == 404
