"""Prediction-powered judge accuracy through the product: experts rate part of a task through the
rating service, judges answered every pair, and the report, the API, the judges page,
`plan_ratings` and the export's manifest show the figure that metrics/ppi.py gives on the same
rated set, computed here from the raw verdicts."""

import io
import json

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse
from rest_framework.test import APIClient

from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Generator, Pair, Prompt, Response
from exports.manifest import judge_accuracy
from judging.models import Judge, Verdict
from metrics import sequential
from metrics.ppi import pool_mean
from metrics.report import project_report
from projects.models import Membership, Project, Task

pytestmark = pytest.mark.django_db

PAIRS, RATED = 90, 60
SKILL = {"strong": 0.9, "middle": 0.75, "weak": 0.6}


@pytest.fixture
def world():
    """A task of 90 queued pairs; three judges answered each pair in both orders; three
    experts rate the first 60 pairs (in the queue's order) through the rating service, all
    on the true side; the rest stay queued."""
    rng = np.random.default_rng(7)
    project = Project.objects.create(
        slug="ppi", name="PPI", scale_points=7, annotators_per_pair=3, target_half_width=0.02
    )
    task = Task.objects.create(project=project, slug="t2i", name="T2I", kind="t2i", aspects=[])
    generator = Generator.objects.create(name="g")
    truth = {}
    for i in range(PAIRS):
        pair = Pair.objects.create(
            project=project,
            task=task,
            external_id=f"p{i}",
            prompt=Prompt.objects.create(
                project=project, fingerprint=f"f{i}", content=[["text", "x"]]
            ),
            response_a=Response.objects.create(generator=generator, content=[["text", "a"]]),
            response_b=Response.objects.create(generator=generator, content=[["text", "b"]]),
            status=Pair.Status.QUEUED,
        )
        truth[pair.pk] = "A" if rng.random() < 0.5 else "B"
    hard = {pair: rng.random() < 0.3 for pair in truth}  # errors shared through difficulty
    for name, skill in SKILL.items():
        judge = Judge.objects.create(name=name, backend="random")
        for pair_id, side in truth.items():
            for order in ("forward", "reverse"):
                right = rng.random() < (skill - 0.3 if hard[pair_id] else skill)
                choice = side if right else ("B" if side == "A" else "A")
                Verdict.objects.create(
                    judge=judge, pair_id=pair_id, order=order, sample=0, choice=choice
                )
    experts = [get_user_model().objects.create_user(f"expert-{n}") for n in range(3)]
    for expert in experts:
        Membership.objects.create(user=expert, project=project, role="annotator")
    kept = Pair.objects.filter(project=project, status=Pair.Status.KEPT)
    while kept.count() < RATED:  # the experts stop early: the rest stays in the queue
        for expert in experts:
            assignment = assignment_claim(expert, task)
            # The form is Left/Right (above the centre: Right is better); Left is B when swapped.
            left_better = (truth[assignment.pair_id] == "A") != assignment.swapped
            rating_submit(assignment.pk, expert, RatingInput(overall=2 if left_better else 6))
    lead = get_user_model().objects.create_user("lead", password="pw-lead-12345")
    Membership.objects.create(user=lead, project=project, role="lead")
    return project, task, truth, lead


def _reference(project, judge_name):
    """Y and f from the raw verdicts, as docs/architecture.md §6.6 defines them."""
    shares = {}
    for judge_id, pair_id, choice in Verdict.objects.values_list("judge_id", "pair_id", "choice"):
        a, b, n = shares.setdefault(judge_id, {}).get(pair_id, (0, 0, 0))
        shares[judge_id][pair_id] = (a + (choice == "A"), b + (choice == "B"), n + 1)
    me = Judge.objects.get(name=judge_name).pk
    labels = dict(Pair.objects.filter(project=project, status="kept").values_list("pk", "label"))
    y, f_rated, f_pool = [], [], []
    for pair_id in sorted(shares[me]):
        a, b, n = shares[me][pair_id]
        others_a = sum(s[pair_id][0] / s[pair_id][2] for j, s in shares.items() if j != me)
        others_b = sum(s[pair_id][1] / s[pair_id][2] for j, s in shares.items() if j != me)
        q = others_a / (others_a + others_b)
        f = q * a / n + (1 - q) * b / n
        f_pool.append(f)
        if pair_id in labels:
            y.append((a if labels[pair_id] == "A" else b) / n)
            f_rated.append(f)
    return pool_mean(y, f_rated, f_pool), len(y), len(f_pool)


def figures_of(report, judge):
    return report["tasks"]["t2i"]["judges"][judge]["prediction_powered"]


def test_the_report_and_the_api_give_the_reference_estimate_on_the_rated_set(world):
    project, _task, _truth, lead = world
    assert Pair.objects.filter(project=project, status="kept").count() == RATED
    report = project_report(project)
    for name in SKILL:
        reference, rated, judged = _reference(project, name)
        figures = figures_of(report, name)
        assert (figures["rated"], figures["judged"]) == (rated, judged) == (RATED, PAIRS)
        assert figures["estimate"] == pytest.approx(reference.estimate, abs=1e-6)
        # Shown as an interim interval: the monitored band (metrics/sequential.py) around the
        # estimate, at least as wide as the fixed-n one the reference gives.
        half = sequential.half_width(figures["std_error"], project.target_half_width)
        assert figures["high"] - figures["estimate"] >= half - 1e-4  # rounded SE
        assert figures["estimate"] - figures["low"] == pytest.approx(
            figures["high"] - figures["estimate"], abs=2e-6
        )
        assert figures["status"] == "interim"
        assert figures["low"] <= reference.low and figures["high"] >= reference.high
        assert report["judges"][name]["prediction_powered"]["estimate"] == figures["estimate"]
    manifest = judge_accuracy(project, [project.tasks.get()])["t2i"]
    assert manifest["weak"]["prediction_powered"] == figures_of(report, "weak")
    assert manifest["weak"]["accuracy"] == report["tasks"]["t2i"]["judges"]["weak"]["accuracy"]
    closest = report["tasks"]["t2i"]["closest_judges"]
    assert set(closest["judges"]) <= set(SKILL) and closest["low"] <= closest["estimate"]

    api = APIClient()
    api.force_authenticate(lead)
    answer = api.get(f"/api/projects/{project.slug}/report/")
    assert answer.status_code == 200
    assert answer.json()["tasks"]["t2i"]["judges"]["weak"]["prediction_powered"] == figures_of(
        report, "weak"
    )


def test_the_judges_page_labels_both_figures(world, client):
    project, _task, _truth, lead = world
    client.force_login(lead)
    body = client.get(reverse("dash-judges", args=[project.slug])).content.decode()
    assert f"from {RATED} rated pairs" in body
    assert f"from {RATED} rated and {PAIRS} judged pairs" in body
    assert "How many more ratings" in body


def test_plan_ratings_answers_for_a_width_and_refuses_a_wrong_one(world):
    project, _task, _truth, _lead = world
    out = io.StringIO()
    call_command("plan_ratings", project="ppi", width=0.02, json=True, stdout=out)
    plan = json.loads(out.getvalue())["tasks"]["t2i"]
    assert plan["rated"] == RATED
    for figures in plan["judges"].values():
        assert 0 <= figures["more_powered"] <= figures["more_classical"] <= PAIRS - RATED
    assert plan["more_powered"] == max(f["more_powered"] for f in plan["judges"].values())
    out = io.StringIO()
    call_command("plan_ratings", project="ppi", width=0.5, json=True, stdout=out)
    assert json.loads(out.getvalue())["tasks"]["t2i"]["met"] is True
    with pytest.raises(CommandError, match="half-width"):
        call_command("plan_ratings", project="ppi", width=0)
    with pytest.raises(CommandError, match="not in"):
        call_command("plan_ratings", project="ppi", task="nope")


def test_the_overview_says_when_the_target_is_met(world, client):
    project, _task, _truth, lead = world
    client.force_login(lead)
    overview = reverse("dash-overview", args=[project.slug])
    assert "Ratings for the target" not in client.get(overview).content.decode()  # not computed
    client.get(reverse("dash-judges", args=[project.slug]))
    body = client.get(overview).content.decode()
    assert "Ratings for the target (±0.020)" in body and "target met" not in body
    Project.objects.filter(pk=project.pk).update(target_half_width=0.5)
    client.get(reverse("dash-judges", args=[project.slug]))  # the new target is a new version
    assert "target met" in client.get(overview).content.decode()
