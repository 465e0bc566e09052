"""A project made with the New project form takes the scale of the first file uploaded into
it: MMRB2's real text-to-image file (scores on 1..6) goes into a project whose form said K = 7,
through the Data page, as a lead does it (the form's "Take K from the first file imported" is ticked
by default). A project that already holds pairs, or whose lead unticked it, keeps its K and
refuses scores on another scale. Skips when ../shared/datasets/mmrb2 is absent."""

import io
import json
import re
import subprocess
import sys
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from django.urls import reverse

from annotation.models import Rating
from content.models import Pair
from imports.models import ImportJob
from projects.models import Project
from projects.services.members import project_creator_grant
from tests.conftest import SHARED_MMRB2
from tests.factories import mmrb2_pair

pytestmark = [pytest.mark.mmrb2, pytest.mark.django_db]

T2I = "t2i_response_only.json"


@pytest.fixture
def t2i_zip(tmp_path) -> bytes:
    """The real file and a placeholder for every image it names (MMRB2's own script)."""
    images = tmp_path / "images"
    script = SHARED_MMRB2 / "make_placeholder_images.py"
    subprocess.run(
        [sys.executable, str(script), str(images), str(SHARED_MMRB2 / T2I)],
        check=True,
        capture_output=True,
    )
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_STORED) as archive:
        archive.write(SHARED_MMRB2 / T2I, T2I)
        for image in images.iterdir():
            archive.write(image, image.name)
    return buffer.getvalue()


@pytest.fixture
def lead_client(client, django_user_model, tasks_in_process):
    """A lead who may create projects; the import jobs run in the test, as the embedded mode's
    do (with REDIS_URL they would wait for a worker)."""
    lead = django_user_model.objects.create_user("leila", password="pw-lead-12345")
    project_creator_grant(lead)
    client.force_login(lead)
    return client


def _create_project_in_the_form(client, slug: str, *, k_from_file: bool = True) -> Project:
    form = client.get(reverse("project-new")).content.decode()
    assert 'name="scale_points"' in form and 'value="7"' in form  # the form's default
    assert re.search(r'<input type="checkbox" name="scale_from_first_file"[^>]* checked', form)
    values = {
        "slug": slug,
        "name": "MMRB2 text to image",
        "scale_points": 7,
        **({"scale_from_first_file": "on"} if k_from_file else {}),
        "annotators_per_pair": 3,
        "max_span": 4,
        "ambiguous_half_width": 0.5,
        "ensemble_threshold": 0.9,
        "lease_minutes": 30,
        "edit_grace_minutes": 10,
        "guidelines": "",
        "target_half_width": 0.03,
        "rating_mode": "all",
        "judge_labels_alpha": 0.1,
        "judge_labels_delta": 0.05,
    }
    answer = client.post(reverse("project-new"), values)
    assert answer.status_code == 302, answer.content.decode()[:2000]
    return Project.objects.get(slug=slug)


def _upload(client, slug, data, django_capture_on_commit_callbacks, *, task="+new", fmt="mmrb2"):
    upload = SimpleUploadedFile("t2i.zip", data, content_type="application/zip")
    new_task = "t2i" if task == "+new" else ""
    values = {"task": task, "new_task": new_task, "destination": "queue", "file_format": fmt}
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(reverse("project-data", args=[slug]), {**values, "file": upload})
    assert answer.status_code == 302
    return ImportJob.objects.filter(project__slug=slug).latest("pk")


def test_mmrb2_uploaded_into_a_new_project_takes_its_six_point_scale(
    lead_client, t2i_zip, django_capture_on_commit_callbacks
):
    project = _create_project_in_the_form(lead_client, "mmrb2-t2i")
    assert project.scale_points == 7

    job = _upload(lead_client, project.slug, t2i_zip, django_capture_on_commit_callbacks)

    assert job.status == ImportJob.Status.DONE, job.error
    source = json.loads((SHARED_MMRB2 / T2I).read_text())["pairs"]
    assert job.pairs_written == len(source) == 1000
    project.refresh_from_db()
    assert project.scale_points == 6 and not project.scale_from_first_file
    assert Rating.objects.filter(pair__project=project).count() == sum(
        len(pair["human_annotations"]) for pair in source
    )
    settings_page = lead_client.get(reverse("project-settings", args=[project.slug]))
    assert 'name="scale_points" value="6"' in settings_page.content.decode()


def _zip_of(name: str, text: str) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        archive.writestr(name, text)
    return buffer.getvalue()


def _text_pair(pair_id: str, **options) -> dict:
    pair = mmrb2_pair(pair_id, **options)
    for side in ("response_a", "response_b"):
        pair[side]["response_content"] = [["text", f"{side} answers"]]
    return pair


def test_a_project_with_pairs_keeps_its_scale_and_refuses_scores_on_another(
    lead_client, django_capture_on_commit_callbacks
):
    project = _create_project_in_the_form(lead_client, "seven")
    unrated = _text_pair("first")
    del unrated["human_annotations"]
    first = _zip_of("pairs.jsonl", json.dumps({**unrated, "scale": 7}) + "\n")
    first_job = _upload(
        lead_client, "seven", first, django_capture_on_commit_callbacks, fmt="native"
    )
    assert first_job.status == ImportJob.Status.DONE, first_job.error

    scored = _zip_of("pairs.json", json.dumps({"pairs": [_text_pair("second")]}))
    job = _upload(lead_client, "seven", scored, django_capture_on_commit_callbacks, task="t2i")

    assert job.status == ImportJob.Status.FAILED
    assert "1..6" in job.error and "K=7" in job.error
    project.refresh_from_db()
    assert project.scale_points == 7
    assert Pair.objects.filter(project=project).count() == 1


def test_a_lead_who_fixed_k_on_the_form_gets_the_refusal(
    lead_client, django_capture_on_commit_callbacks
):
    project = _create_project_in_the_form(lead_client, "fixed", k_from_file=False)
    scored = _zip_of("pairs.json", json.dumps({"pairs": [_text_pair("only")]}))

    job = _upload(lead_client, "fixed", scored, django_capture_on_commit_callbacks)

    assert job.status == ImportJob.Status.FAILED
    assert "1..6" in job.error and "K=7" in job.error
    project.refresh_from_db()
    assert project.scale_points == 7 and not Pair.objects.filter(project=project).exists()


def test_mmrb2_left_to_be_recognised_from_the_file_imports_as_mmrb2(
    lead_client, t2i_zip, django_capture_on_commit_callbacks
):
    """The upload form's default format, "From the file": MMRB2's {"pairs": [...]} file is
    recognised by how it begins (read as Arbiter's JSON Lines it was refused)."""
    project = _create_project_in_the_form(lead_client, "mmrb2-detected")

    job = _upload(lead_client, project.slug, t2i_zip, django_capture_on_commit_callbacks, fmt="")

    assert job.status == ImportJob.Status.DONE, job.error
    assert job.pairs_written == 1000
    project.refresh_from_db()
    assert project.scale_points == 6


def test_a_json_list_left_to_be_recognised_imports_as_mjbench(
    lead_client, django_capture_on_commit_callbacks
):
    project = _create_project_in_the_form(lead_client, "listed", k_from_file=False)
    record = {
        "id": "listed-1",
        "caption": "a red cube on a blue sphere",
        "image0": "",
        "image1": "",
        "label": 0,
    }
    data = _zip_of("pairs.json", json.dumps([record]))

    job = _upload(lead_client, project.slug, data, django_capture_on_commit_callbacks, fmt="")

    # Read as MJ-Bench: its reader wants the images the record names (a JSON Lines reader
    # would have refused the list itself).
    assert job.status == ImportJob.Status.FAILED
    assert job.error == "image reference '' is not a file name", job.error
