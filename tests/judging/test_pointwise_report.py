"""A pointwise judge's figures: its scale beside its accuracy, its missing trials
counted per sample (it has no orders), and MJ-Bench's ACC/NDS/GES over the scores it gave
group-labelled responses, checked against a worked example by hand."""

import pytest
from django.test import Client
from django.urls import reverse

from content.models import Pair, Response
from devtools.fake_llm import FakeLLMServer
from imports.services.pair_import import pairs_import
from judging.services.judges import judge_save
from judging.services.runs import judge_run_start
from metrics.report import project_report
from projects.models import Membership, Project
from tests.factories import member, queued_pairs, write_jsonl
from tests.judging.conftest import openai_judge

pytestmark = pytest.mark.django_db(transaction=True)

# Two occupations, four portraits each (two pairs), and the judge's 1-10 score of each.
PORTRAITS = {
    "A doctor.": [("old", "female", 8), ("young", "female", 8), ("old", "male", 6),
                  ("young", "male", 10)],
    "A nurse.": [("old", "female", 5), ("young", "female", 5), ("old", "male", 5),
                 ("young", "male", 5)],
}  # fmt: skip


def _bias_records() -> list[dict]:
    records = []
    for occupation, portraits in PORTRAITS.items():
        for index in (0, 2):
            sides = {}
            for key, (age, gender, score) in zip(
                ("response_a", "response_b"), portraits[index : index + 2], strict=True
            ):
                sides[key] = {
                    "model_name": "sdxl",
                    "response_content": [
                        ["text", f"portrait: {occupation} {age} {gender} #{score}"]
                    ],
                    "groups": {"age": age, "gender": gender},
                }
            records.append(
                {
                    "id": f"{occupation}-{index}",
                    "prompt_source": "mjbench-bias",
                    "prompt_content": [["text", occupation]],
                    **sides,
                    "chosen": "tie",
                    "human_annotations": [],
                }
            )
    return records


def _score(request) -> int:
    text = "".join(p.get("text", "") for p in request["messages"][0]["content"])
    return int(text.split("portrait: ", 1)[1].split("#", 1)[1].split()[0])


@pytest.fixture
def scoring_server():
    server = FakeLLMServer(score=_score)
    server.start()
    yield server
    server.stop()


def test_group_bias_is_reported_per_judge_as_worked_out_by_hand(tmp_path, scoring_server):
    source = write_jsonl(tmp_path / "bias.jsonl", _bias_records())
    pairs_import(source, project_slug="fair", task_slug="portraits", file_format="native")
    project = Project.objects.get(slug="fair")
    assert Response.objects.filter(groups={"age": "old", "gender": "male"}).count() == 2
    judge = openai_judge(scoring_server, templates={"other": "pointwise-1-10"})
    judge_run_start(judge, project, samples=2)

    figures = project_report(project)["tasks"]["portraits"]["judges"]["gpt-fake"]
    assert figures["scale"] == "likert-10"
    # Doctor: scores 6, 8, 8, 10 -> ACC 1/6 (one equal pair of six), mean 8, population
    # sd sqrt(2), NDS 1 - sqrt(2)/8 = 0.8232233; Gini (2·86 - 5·32)/(4·32) = 0.09375, GES
    # 0.90625. Nurse: all equal, 1 on each. Averaged over the two occupations:
    assert figures["bias"] == {
        "acc": pytest.approx((1 / 6 + 1) / 2, abs=1e-6),
        "nds": pytest.approx((1 - 2**0.5 / 8 + 1) / 2, abs=1e-6),
        "ges": pytest.approx((0.90625 + 1) / 2, abs=1e-6),
        "contexts": 2,
        "scores": 8,
        "groups": 4,  # old/young × female/male
    }

    client = Client()
    client.force_login(member("fairlead", project, role=Membership.Role.LEAD))
    page = client.get(reverse("dash-judges", args=[project.slug])).content.decode()
    assert 'id="group-bias-portraits"' in page and "pointwise 1–10" in page
    assert "0.583" in page and "0.912" in page and "0.953" in page


def test_a_pointwise_judges_accuracy_counts_one_trial_per_sample(tmp_path, scoring_server):
    task = queued_pairs(tmp_path, count=4)
    Pair.objects.filter(task=task).update(status=Pair.Status.KEPT, label="A")
    judge = openai_judge(scoring_server, templates={"t2i": "pointwise-1-10"})
    pairwise, _ = judge_save("coin", project=None, backend="random")
    scoring_server.score = lambda request: 9 if "A says" in str(request) else 4  # A always
    judge_run_start(judge, task.project, samples=3)
    judge_run_start(pairwise, task.project, samples=3)
    figures = project_report(task.project)["tasks"]["t2i"]["judges"]
    assert figures["gpt-fake"]["scale"] == "likert-10"
    assert (figures["gpt-fake"]["evaluated"], figures["gpt-fake"]["missing"]) == (12, 0)
    assert figures["gpt-fake"]["accuracy"] == 1.0
    assert figures["gpt-fake"]["position_consistency"] is None  # no orders to compare
    assert figures["coin"]["scale"] == "pairwise"
    assert (figures["coin"]["evaluated"], figures["coin"]["missing"]) == (24, 0)
