"""The upload form: the task comes from the project's list ("new task" is its own choice),
each format has a sample file, and a refused upload is explained in the file's terms (records,
fields, images), never in the server's (its temporary folder) or the command line's (flags)."""

import json
from pathlib import Path

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse
from django.utils import timezone

from content.importing.formats import FORMATS, SAMPLE_FILES
from content.models import Pair
from imports.models import ImportJob
from projects.models import Project, Task
from tests.leads.test_data_page import pairs_zip

pytestmark = [
    pytest.mark.django_db,
    pytest.mark.usefixtures("tasks_in_process", "lead_signs_in"),
]

SAMPLES = Path(__file__).resolve().parents[2] / "static" / "samples"
URL = reverse("project-data", args=["data"])


@pytest.fixture
def project():
    return Project.objects.create(slug="data", name="Data")


@pytest.fixture
def import_temp(settings, tmp_path) -> Path:
    folder = tmp_path / "import-tmp"
    folder.mkdir()
    settings.ARBITER_IMPORT_TEMP_DIR = str(folder)
    return folder


@pytest.fixture
def upload(client, django_capture_on_commit_callbacks):
    """Post a file to the data page as the lead would; jobs run when the upload commits."""

    def post(data: bytes, name: str = "pairs.zip", **fields):
        values = {"destination": "queue", "file_format": "", **fields}
        with django_capture_on_commit_callbacks(execute=True):
            return client.post(URL, {**values, "file": SimpleUploadedFile(name, data)})

    return post


def _task(project, slug, **fields) -> Task:
    return Task.objects.create(project=project, slug=slug, name=slug.upper(), **fields)


# --------------------------------------------------------------------------- the task


def test_the_task_is_picked_from_the_projects_tasks_and_archived_ones_are_not_offered(
    client, lead, project
):
    _task(project, "t2i")
    _task(project, "old", archived_at=timezone.now())
    form = client.get(URL).context["form"]
    assert form.fields["task"].choices == [("t2i", "T2I (t2i)"), ("+new", "New task…")]


def test_an_existing_task_is_chosen_from_the_list(client, lead, project, upload):
    task = _task(project, "t2i")
    assert upload(pairs_zip(2), task="t2i").status_code == 302
    assert Pair.objects.filter(task=task).count() == 2
    assert Task.objects.count() == 1


def test_a_new_task_is_an_explicit_choice_with_its_own_slug(client, lead, project, upload):
    _task(project, "t2i")
    answer = upload(pairs_zip(2), task="+new", new_task="edit")
    assert answer.status_code == 302
    assert Pair.objects.filter(task__slug="edit").count() == 2


@pytest.mark.parametrize(
    ("fields", "error"),
    [
        ({"task": "tti"}, "Select a valid choice"),  # a typo is no longer a new task
        ({"task": "+new"}, "Give the new task a slug"),
        ({"task": "+new", "new_task": "t2i"}, "exists: choose it in the list"),
        ({"task": "+new", "new_task": "old"}, "is archived: restore it"),
        ({"task": "old"}, "Select a valid choice"),
        ({"task": "t2i", "new_task": "edit"}, "Choose “New task…” above"),
    ],
)
def test_a_task_that_is_not_chosen_plainly_is_refused_beside_the_field(
    client, lead, project, upload, fields, error
):
    _task(project, "t2i")
    _task(project, "old", archived_at=timezone.now())
    answer = upload(pairs_zip(1), **fields)
    assert answer.status_code == 400
    assert error in answer.content.decode()
    assert not ImportJob.objects.exists() and Task.objects.count() == 2


def test_another_projects_task_is_not_a_choice(client, lead, project, upload):
    other = Project.objects.create(slug="other", name="Other")
    _task(other, "secret")
    page = client.get(URL).content.decode()
    assert "secret" not in page.lower()
    assert upload(pairs_zip(1), task="secret").status_code == 400
    assert not Pair.objects.exists()


# --------------------------------------------------------------------------- sample files


def test_the_page_offers_a_sample_file_of_every_format(client, lead):
    page = client.get(URL).content.decode()
    assert set(SAMPLE_FILES) == set(FORMATS)
    for name in SAMPLE_FILES.values():
        assert f"samples/{name}" in page
        assert (SAMPLES / name).is_file()


@pytest.mark.parametrize("file_format", FORMATS)
def test_every_sample_file_imports_through_the_page(client, lead, upload, file_format):
    name = SAMPLE_FILES[file_format]
    answer = upload(
        (SAMPLES / name).read_bytes(),
        name=name,
        task="+new",
        new_task="t2i",
        file_format=file_format,
    )
    assert answer.status_code == 302
    job = ImportJob.objects.get()
    assert job.status == "done", job.error
    assert job.pairs_written == 2 and job.images_checked == 4


# --------------------------------------------------------------------------- messages


def _refusal(client) -> str:
    page = client.get(URL).content.decode()
    start = page.index('<p class="error" role="alert">Refused')
    return page[start : page.index("</p>", start)]


def test_a_missing_image_is_named_without_the_servers_folder(
    client, lead, project, upload, import_temp, settings
):
    _task(project, "t2i")
    upload(pairs_zip(4, broken_at=3), task="t2i")
    job = ImportJob.objects.get()
    assert job.status == "failed" and job.error_record == 3
    shown = _refusal(client)
    assert "&#x27;img/missing.png&#x27; is not among the images that came with the file" in shown
    for server_side in (str(import_temp), "arbiter-upload", str(settings.MEDIA_ROOT), "/tmp"):
        assert server_side not in job.error and server_side not in shown


def test_a_file_without_its_images_is_told_to_come_in_a_zip_not_about_flags(
    client, lead, project, upload
):
    _task(project, "t2i")
    line = {
        "id": "p1",
        "prompt_content": [["text", "Draw"]],
        "response_a": {"model_name": "m1", "response_content": [["image", "a.png"]]},
        "response_b": {"model_name": "m2", "response_content": [["image", "b.png"]]},
    }
    upload(json.dumps(line).encode() + b"\n", name="pairs.jsonl", task="t2i")
    job = ImportJob.objects.get()
    assert "upload a zip archive holding the data file and its images" in job.error
    assert "--" not in job.error and "--" not in _refusal(client)


def test_the_refused_record_and_the_records_checked_agree(client, lead, project, upload):
    _task(project, "t2i")
    upload(pairs_zip(4, broken_at=3), task="t2i")  # well within one progress interval
    job = ImportJob.objects.get()
    assert (job.records_checked, job.error_record) == (2, 3)
    assert "Refused at record 3 (the 2 records before it passed the checks)" in _refusal(client)


@pytest.mark.parametrize("name", ["pairs.jsonl", "pairs.json"])
def test_a_broken_json_string_is_placed_in_plain_words(client, lead, project, upload, name):
    _task(project, "t2i")
    data = b'{"id": "p1", "prompt_content": [["text", "Draw]]}\n'
    if name.endswith(".json"):
        data = b'{"pairs": [' + data.strip() + b"]}"
    upload(data, name=name, task="t2i", file_format="native" if name.endswith("l") else "mmrb2")
    error = ImportJob.objects.get().error
    assert "Unterminated string starting at " in error
    assert "at at" not in error and "at at" not in _refusal(client)


def test_the_pairs_table_marks_an_archived_task_and_offers_no_queueing(
    client, lead, project, upload
):
    task = _task(project, "t2i")
    upload(pairs_zip(2), task="t2i", destination="candidates")
    Task.objects.filter(pk=task.pk).update(archived_at=timezone.now())
    page = client.get(URL).content.decode()
    assert "· archived" in page and "Send 2 to annotation" not in page


def test_an_empty_file_is_refused_without_the_servers_name_for_it(client, lead, project, upload):
    _task(project, "t2i")
    upload(b"[]", name="mine.json", task="t2i", file_format="mjbench")
    error = ImportJob.objects.get().error
    assert error == "the data file holds no records"
