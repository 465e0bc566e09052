"""Ensemble filtering of candidate pairs, through the service and the command."""

import json

import pytest
from django.core.management import CommandError, call_command

from annotation.models import GoldAnswer
from annotation.services.assignments import assignment_claim
from content.models import Pair
from devtools.fake_llm import FakeLLMServer
from judging.services.ensemble import (
    ensemble_gold_set,
    ensemble_set,
    ensemble_summary,
    ensemble_unanimous_easy,
)
from judging.services.runs import RunRefused
from tests.factories import member, queued_pairs
from tests.judging.conftest import openai_judge

pytestmark = pytest.mark.django_db(transaction=True)


def _decide(request):
    """`biased-*` judges always name the response shown first; the others prefer the
    response whose text says "A says", whatever the order."""
    if request["model"].startswith("biased"):
        return "A"
    joined = "".join(p.get("text", "") for p in request["messages"][0]["content"])
    return "A" if joined.index("A says") < joined.index("B says") else "B"


@pytest.fixture
def server():
    fake = FakeLLMServer(decide=_decide)
    fake.start()
    yield fake
    fake.stop()


@pytest.fixture
def candidates(tmp_path):
    task = queued_pairs(tmp_path, count=6)
    Pair.objects.filter(task=task).update(status=Pair.Status.CANDIDATE)
    return task


def _judges(server):
    return {
        "steady-1": openai_judge(server, "steady-1", model="steady-1"),
        "steady-2": openai_judge(server, "steady-2", model="steady-2"),
        "biased": openai_judge(server, "biased", model="biased-1"),
    }


def _filter(project, task, capsys):
    call_command("ensemble_filter", "--project", project.slug, "--task", task.slug, "--json")
    return json.loads(capsys.readouterr().out)["tasks"][0]


def test_pairs_the_ensemble_agrees_on_are_easy_and_never_reach_annotators(
    server, candidates, capsys
):
    judges = _judges(server)
    ensemble_set(candidates, [judges["steady-1"], judges["steady-2"]])
    summary = _filter(candidates.project, candidates, capsys)
    assert (summary["candidates"], summary["easy"], summary["queued"]) == (6, 6, 0)
    assert summary["by_judge"] == {"steady-1": 6, "steady-2": 6}
    assert set(Pair.objects.filter(task=candidates).values_list("status", flat=True)) == {"easy"}
    assert assignment_claim(member("expert", candidates.project), candidates) is None
    # Both orders were asked of each judge.
    assert len(server.requests) == 6 * 2 * 2


def test_disagreement_below_the_threshold_queues_the_pairs(server, candidates, capsys):
    judges = _judges(server)
    ensemble_set(candidates, [judges["steady-1"], judges["biased"]])
    summary = _filter(candidates.project, candidates, capsys)
    # Per pair: steady A, A; biased A (forward), B (reverse): 3 of 4 agree = 0.75 < 0.9.
    assert (summary["easy"], summary["queued"]) == (0, 6)
    assert summary["by_judge"] == {"steady-1": 6, "biased": 0}
    assert set(Pair.objects.filter(task=candidates).values_list("status", flat=True)) == {"queued"}
    assert assignment_claim(member("expert", candidates.project), candidates) is not None


def test_the_task_threshold_overrides_the_projects(server, candidates, capsys):
    judges = _judges(server)
    ensemble_set(candidates, [judges["steady-1"], judges["biased"]], threshold=0.75)
    summary = _filter(candidates.project, candidates, capsys)
    assert (summary["threshold"], summary["easy"]) == (0.75, 6)


def test_only_candidates_are_filtered(server, candidates, capsys):
    judges = _judges(server)
    ensemble_set(candidates, [judges["steady-1"]])
    first = Pair.objects.filter(task=candidates).first()
    Pair.objects.filter(pk=first.pk).update(status=Pair.Status.KEPT)
    summary = _filter(candidates.project, candidates, capsys)
    assert summary["candidates"] == 5
    assert Pair.objects.get(pk=first.pk).status == Pair.Status.KEPT


def test_a_task_without_an_ensemble_is_a_clear_error(candidates):
    with pytest.raises(CommandError, match="names no ensemble judges"):
        call_command(
            "ensemble_filter", "--project", candidates.project.slug, "--task", candidates.slug
        )
    assert set(Pair.objects.values_list("status", flat=True)) == {"candidate"}


def test_a_threshold_outside_the_range_is_refused(server, tmp_path):
    from judging.services.runs import RunRefused

    task = queued_pairs(tmp_path, count=1)
    with pytest.raises(RunRefused):
        ensemble_set(task, [], threshold=0.4)


def test_the_unanimous_easy_pairs_become_gold_checks_with_the_side_named(
    server, candidates, capsys
):
    judges = _judges(server)
    ensemble_set(candidates, [judges["steady-1"], judges["biased"]], threshold=0.75)
    _filter(candidates.project, candidates, capsys)  # 3 of 4 agree: easy, not unanimous
    assert ensemble_unanimous_easy(candidates) == []
    with pytest.raises(RunRefused, match="judged unanimously"):
        ensemble_gold_set(candidates)
    Pair.objects.filter(task=candidates).update(status=Pair.Status.CANDIDATE)
    ensemble_set(candidates, [judges["steady-1"], judges["steady-2"]])
    _filter(candidates.project, candidates, capsys)
    # The steady judges name A ("A says" comes first) in both orders: 4 of 4.
    assert ensemble_gold_set(candidates) == 6
    sides = set(GoldAnswer.objects.filter(pair__task=candidates).values_list("side", flat=True))
    assert sides == {"A"}
    assert set(Pair.objects.filter(task=candidates).values_list("status", flat=True)) == {"gold"}
    # The filter's summary still counts them as removed by the ensemble, not as queued.
    summary = ensemble_summary(candidates, [p.pk for p in Pair.objects.filter(task=candidates)])
    assert (summary.easy, summary.queued, summary.gold) == (6, 0, 6)
