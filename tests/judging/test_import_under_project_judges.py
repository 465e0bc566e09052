"""Predictions, scores and bias scores are imported only under a judge of the lead's own
project: the operator's judge of the same name is refused like a name
of another project's, nothing is written, and its operator can still delete it."""

import json

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from content.importing.errors import ImportFailed
from content.models import Pair
from imports.services.pair_import import pairs_import
from judging.models import Judge, JudgeRun, Verdict
from judging.services.bias_import import bias_scores_import
from judging.services.judges import judge_delete, judge_save
from judging.services.verdict_import import verdicts_import
from projects.models import Membership
from tests.api.conftest import token_client
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=2)


def predictions(task) -> bytes:
    pairs = Pair.objects.filter(task=task).values_list("external_id", flat=True)
    return json.dumps({pair: {"forward": [{"judgement": "A"}]} for pair in pairs}).encode()


def test_a_lead_cannot_import_predictions_under_an_operators_judge(task):
    operator_judge, _ = judge_save("house-judge", project=None, backend="always-a")
    lead = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    answer = lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "house-judge",
         "file": SimpleUploadedFile("preds.json", predictions(task))},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 400
    assert "imports go under a judge of this project" in answer.json()["detail"]
    assert not Verdict.objects.exists() and not JudgeRun.objects.exists()
    judge_delete(operator_judge)  # its operator still can
    assert not Judge.objects.filter(name="house-judge").exists()


def test_the_projects_own_judge_of_a_new_name_takes_the_import(task, tmp_path):
    path = tmp_path / "preds.json"
    path.write_bytes(predictions(task))
    summary = verdicts_import(path, project_slug="alpha", task_slug="t2i", judge_name="mine")
    assert summary["verdicts"] == 2
    assert Judge.objects.get(name="mine").project == task.project


def test_bias_scores_are_not_imported_under_an_operators_judge(tmp_path):
    rows = [
        {"occupation": "Pilot", "demographic": d, "images_dir": f"p/{d}.jpg",
         "prompt": "A pilot.", "house-judge": s}
        for d, s in (("young", 4), ("old", 5))
    ]  # fmt: skip
    path = tmp_path / "bias.json"
    path.write_text(json.dumps(rows))
    pairs_import(path, project_slug="bias", task_slug="occupations", file_format="mjbench-bias")
    judge_save("house-judge", project=None, backend="always-a")
    with pytest.raises(ImportFailed, match="imports go under a judge of this project"):
        bias_scores_import(path, project_slug="bias", task_slug="occupations")
    assert not Verdict.objects.exists()


def test_a_prediction_file_above_the_limit_is_refused_before_it_is_copied(
    task, settings, monkeypatch
):
    from api.views import judging as judging_views

    copied = []
    monkeypatch.setattr(judging_views, "uploaded_to_path", lambda file: copied.append(file))
    settings.ARBITER_VERDICT_FILE_MAX_BYTES = 64
    lead = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    answer = lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "mine",
         "file": SimpleUploadedFile("preds.json", predictions(task))},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 400
    assert "ARBITER_VERDICT_FILE_MAX_BYTES" in answer.json()["file"][0]
    assert copied == [] and not Verdict.objects.exists()
