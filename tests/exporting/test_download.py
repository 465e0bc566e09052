"""The lead's exports pages: the overview's form POSTs to /projects/<slug>/exports/start/,
which starts a background job and redirects to the list (/projects/<slug>/exports/); a done
job's zip downloads from /projects/<slug>/exports/<id>/download/."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from exports.jobs import export_job_run, export_job_start
from exports.models import ExportJob
from projects.models import Membership
from tests.exporting.helpers import export_job_path
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def temp_dir(settings, tmp_path):
    settings.FILE_UPLOAD_TEMP_DIR = tmp_path / "tmp"
    settings.FILE_UPLOAD_TEMP_DIR.mkdir()
    return settings.FILE_UPLOAD_TEMP_DIR


def _start(client, capture, slug="exp", **form):
    with capture(execute=True):
        return client.post(reverse("dash-export-start", args=[slug]), form)


def _zip(response) -> zipfile.ZipFile:
    body = b"".join(response.streaming_content)
    response.close()
    return zipfile.ZipFile(io.BytesIO(body))


def test_a_lead_starts_an_export_and_downloads_it(
    client, rated, django_capture_on_commit_callbacks
):
    client.force_login(rated.lead)
    started = _start(
        client, django_capture_on_commit_callbacks, format="jsonl", task="", include_dropped="1"
    )
    assert started.status_code == 302
    assert started["Location"] == reverse("dash-exports", args=["exp"])
    job = ExportJob.objects.get()
    assert (job.status, job.requested_by, job.include_dropped) == ("done", rated.lead, True)
    page = client.get(started["Location"]).content.decode()
    download = reverse("dash-export-download", args=["exp", job.pk])
    assert "Export started" in page and "Done" in page and f'href="{download}"' in page
    assert "hx-trigger" not in page  # nothing left to wait for
    response = client.get(download)
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="exp-jsonl.zip"'
    archive = _zip(response)
    assert archive.namelist()[:3] == ["manifest.json", "edit.jsonl", "t2i.jsonl"]
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["options"]["include_dropped"] is True
    assert archive.testzip() is None


def test_parquet_of_one_task_with_verdicts(client, rated, django_capture_on_commit_callbacks):
    client.force_login(rated.lead)
    _start(
        client, django_capture_on_commit_callbacks, format="parquet", task="t2i",
        with_verdicts="on",
    )  # fmt: skip
    job = ExportJob.objects.get()
    response = client.get(reverse("dash-export-download", args=["exp", job.pk]))
    assert response["Content-Disposition"] == 'attachment; filename="exp-parquet.zip"'
    assert _zip(response).namelist() == ["manifest.json", "t2i.parquet"]


def test_the_list_polls_while_a_job_is_queued(client, rated):
    client.force_login(rated.lead)
    job = export_job_start(rated.project, rated.lead)  # not committed: stays queued
    url = reverse("dash-exports", args=["exp"])
    page = client.get(url).content.decode()
    assert f'hx-get="{url}" hx-trigger="every 2s"' in page and "Queued" in page
    assert "vendor/htmx-" in page
    assert reverse("dash-export-download", args=["exp", job.pk]) not in page
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert partial.startswith('<section id="export-jobs"') and "<h1>" not in partial
    export_job_run(job.pk)
    partial = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert "hx-trigger" not in partial and "Done" in partial


def test_a_failed_job_shows_its_error(client, rated):
    client.force_login(rated.lead)
    job = ExportJob.objects.create(
        project=rated.project, requested_by=rated.lead, status="failed", error="disk full"
    )
    page = client.get(reverse("dash-exports", args=["exp"])).content.decode()
    assert "Failed" in page and "disk full" in page
    download = reverse("dash-export-download", args=["exp", job.pk])
    assert download not in page
    assert client.get(download).status_code == 404


def test_only_the_projects_leads_reach_the_exports(client, rated, imported):
    job = export_job_start(rated.project, rated.lead)
    export_job_run(job.pk)
    urls = [
        reverse("dash-exports", args=["exp"]),
        reverse("dash-export-download", args=["exp", job.pk]),
    ]
    start = reverse("dash-export-start", args=["exp"])
    assert reverse("login") in client.get(urls[0])["Location"]
    # The project's annotator is refused; a stranger is answered as for a missing project.
    for user, status in ((rated.annotators[0], 403), (User.objects.create_user("stranger"), 404)):
        client.force_login(user)
        assert [client.get(url).status_code for url in urls] == [status, status]
        assert client.post(start).status_code == status
    assert ExportJob.objects.count() == 1
    client.force_login(rated.lead)
    assert client.get(start).status_code == 405
    assert client.get(reverse("dash-exports", args=["nope"])).status_code == 404
    # A job of another project is not found through this one.
    imp_lead = member("imp-boss", imported, role=Membership.Role.LEAD)
    other = export_job_start(imported, imp_lead)
    export_job_run(other.pk)
    assert client.get(reverse("dash-export-download", args=["exp", other.pk])).status_code == 404


@pytest.mark.parametrize(
    ("form", "message"),
    [
        ({"format": "csv"}, "unknown format &#x27;csv&#x27;"),
        ({"task": "nope"}, "no task &#x27;nope&#x27;"),
        ({"include_dropped": "maybe"}, "include_dropped must be 1 or 0"),
    ],
)
def test_bad_options_are_refused_with_a_message(
    client, rated, django_capture_on_commit_callbacks, form, message
):
    client.force_login(rated.lead)
    response = _start(client, django_capture_on_commit_callbacks, **form)
    assert not ExportJob.objects.exists()
    page = client.get(response["Location"]).content.decode()
    assert "Export refused" in page and message in page


def test_the_list_has_a_query_budget(client, rated, django_assert_num_queries):
    for _ in range(3):
        export_job_run(export_job_start(rated.project, rated.lead, task_slug="t2i").pk)
    client.force_login(rated.lead)
    # session, user, project, lead check, the jobs with their user and task
    with django_assert_num_queries(5):
        response = client.get(reverse("dash-exports", args=["exp"]), HTTP_HX_REQUEST="true")
    assert response.content.decode().count("Download .zip") == 3


def test_the_overview_offers_the_export_form(client, rated):
    client.force_login(rated.lead)
    body = client.get(reverse("dash-overview", args=["exp"])).content.decode()
    form = body.index(f'action="{reverse("dash-export-start", args=["exp"])}"')
    assert body.index("<h1>") < form  # in the page, not in its head
    assert body[form - 40 : form].count('method="post"') == 1
    assert 'name="csrfmiddlewaretoken"' in body[form:]
    assert '<option value="parquet">' in body and '<option value="t2i">' in body
    assert 'name="include_dropped"' in body and 'name="with_verdicts"' in body


def test_an_mmrb2_export_from_the_overview(client, rated, django_capture_on_commit_callbacks):
    client.force_login(rated.lead)
    overview = client.get(reverse("dash-overview", args=["exp"])).content.decode()
    assert '<option value="mmrb2">' in overview
    _start(client, django_capture_on_commit_callbacks, format="mmrb2", task="")
    job = ExportJob.objects.get()
    assert (job.file_format, job.status) == ("mmrb2", "done")
    archive = _zip(client.get(reverse("dash-export-download", args=["exp", job.pk])))
    names = archive.namelist()
    assert {"manifest.json", "edit.json", "t2i.json"} <= set(names)
    benchmark = json.loads(archive.read("t2i.json"))
    assert {pair["chosen"] for pair in benchmark["pairs"]} <= {"A", "B"}


def test_archived_tasks_are_exported_unless_the_lead_leaves_them_out(
    client, rated, django_capture_on_commit_callbacks
):
    from django.utils import timezone

    from projects.models import Task

    Task.objects.filter(project__slug="exp", slug="edit").update(archived_at=timezone.now())
    client.force_login(rated.lead)
    page = client.get(reverse("dash-exports", args=["exp"])).content.decode()
    assert 'name="without_archived"' in page  # offered only when a task is archived
    _start(client, django_capture_on_commit_callbacks, format="jsonl")
    _start(client, django_capture_on_commit_callbacks, format="jsonl", without_archived="1")
    kept, left_out = ExportJob.objects.order_by("pk")
    assert (kept.include_archived, left_out.include_archived) == (True, False)
    names = {}
    for job in (kept, left_out):
        with zipfile.ZipFile(export_job_path(job)) as archive:
            names[job.pk] = [n for n in archive.namelist() if n.endswith(".jsonl")]
    assert names == {kept.pk: ["edit.jsonl", "t2i.jsonl"], left_out.pk: ["t2i.jsonl"]}
