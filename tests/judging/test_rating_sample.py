"""Rating a sample chosen for information: the weights frozen from the judges'
uncertainty, the claim's order and budget, the switch on the settings page, and the active
estimate of the report on the rated prefix, checked against metrics/ppi.py::active_mean."""

from unittest.mock import patch

import numpy as np
import pytest
from django.contrib.auth import get_user_model
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim, assignment_skip
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Generator, Pair, Prompt, Response
from judging.models import Judge, Verdict
from judging.services.sampling import FLOOR, sample_start, sample_stop, uncertainty, weights
from metrics import kept_ratio as kept_ratio_module
from metrics import sequential
from metrics.judge_ppi import counted_pairs
from metrics.kept_ratio import sample_estimate
from metrics.ppi import active_mean
from metrics.report import project_report
from projects.models import Membership, Project, Task

pytestmark = pytest.mark.django_db


def test_the_weight_follows_the_judges_uncertainty_above_a_uniform_floor():
    assert uncertainty(5, 5) == 1.0 and uncertainty(4, 0) == 0.0 and uncertainty(0, 0) is None
    frozen = weights({1: 1.0, 2: 0.0, 3: 0.5, 4: None})
    assert frozen[1] == pytest.approx(FLOOR + (1 - FLOOR) * 2)  # twice the mean uncertainty
    assert frozen[2] == pytest.approx(FLOOR)  # unanimous judges: still drawable
    assert frozen[4] == 1.0  # no judge answered
    assert np.mean([frozen[1], frozen[2], frozen[3]]) == pytest.approx(1.0)
    assert weights({1: 0.0, 2: 0.0}) == {1: 1.0, 2: 1.0}


def _task(pairs: int, seed: int = 3):
    rng = np.random.default_rng(seed)
    project = Project.objects.create(slug="s", name="S", scale_points=7, annotators_per_pair=1)
    task = Task.objects.create(project=project, slug="t2i", name="T", kind="t2i", aspects=[])
    generator = Generator.objects.create(name="g")
    truth = {}
    for i in range(pairs):
        pair = Pair.objects.create(
            project=project, task=task, external_id=f"p{i}",
            prompt=Prompt.objects.create(project=project, fingerprint=f"f{i}", content=[]),
            response_a=Response.objects.create(generator=generator, content=[["text", "a"]]),
            response_b=Response.objects.create(generator=generator, content=[["text", "b"]]),
            status=Pair.Status.QUEUED,
        )  # fmt: skip
        truth[pair.pk] = "A" if rng.random() < 0.5 else "B"
    hard = {pair: rng.random() < 0.4 for pair in truth}
    for name, skill in (("strong", 0.92), ("middle", 0.8), ("weak", 0.65)):
        judge = Judge.objects.create(name=name, backend="random")
        for pair_id, side in truth.items():
            for order in ("forward", "reverse"):
                right = rng.random() < (skill - 0.35 if hard[pair_id] else skill)
                other = "B" if side == "A" else "A"
                Verdict.objects.create(
                    judge=judge, pair_id=pair_id, order=order, sample=0,
                    choice=side if right else other,
                )  # fmt: skip
    return project, task, truth


def test_starting_a_sample_freezes_weights_and_the_claim_serves_pairs_by_draw_over_weight():
    project, task, _truth = _task(40)
    assert sample_start(project, budget=None) == 40
    pairs = list(Pair.objects.filter(task=task))
    assert all(pair.weight is not None and pair.weight >= FLOOR - 1e-12 for pair in pairs)
    assert np.mean([pair.weight for pair in pairs]) == pytest.approx(1.0)
    expert = get_user_model().objects.create_user("e")
    Membership.objects.create(user=expert, project=project, role="annotator")
    project.refresh_from_db()
    served = []
    for _ in range(5):
        assignment = assignment_claim(
            expert, Task.objects.select_related("project").get(pk=task.pk)
        )
        served.append(assignment.pair)
        rating_submit(assignment.pk, expert, RatingInput(overall=6))
    by_key = sorted(pairs, key=lambda pair: pair.draw / pair.weight)
    assert [pair.pk for pair in served] == [pair.pk for pair in by_key[:5]]
    # Judges' later verdicts do not move a frozen weight.
    before = {pair.pk: pair.weight for pair in pairs}
    assert sample_start(project, budget=None) == 0
    assert dict(Pair.objects.filter(task=task).values_list("pk", "weight")) == before


def _claim(user, task):
    return assignment_claim(user, Task.objects.select_related("project").get(pk=task.pk))


def test_the_budget_stops_new_pairs_but_lets_started_ones_finish():
    project, task, _truth = _task(12)
    project.annotators_per_pair = 2
    project.save(update_fields=["annotators_per_pair"])
    sample_start(project, budget=2)
    e0, e1, e2 = (get_user_model().objects.create_user(f"e{n}") for n in range(3))
    for expert in (e0, e1, e2):
        Membership.objects.create(user=expert, project=project, role="annotator")
    first = _claim(e0, task)
    joined = _claim(e1, task)
    assert joined.pair_id == first.pair_id  # a started pair fills first
    rating_submit(first.pk, e0, RatingInput(overall=6))
    rating_submit(joined.pk, e1, RatingInput(overall=6))
    second = _claim(e0, task)
    assert second.pair_id != first.pair_id  # the second pair of the budget
    assert _claim(e2, task).pair_id == second.pair_id  # the budget is spent: only started ones
    assert _claim(e1, task) is None  # rated the first, and the second is full
    assert Assignment.objects.values("pair").distinct().count() == 2
    sample_stop(project)
    assert _claim(e1, task).pair_id not in {first.pair_id, second.pair_id}


def test_the_settings_page_switches_the_mode_for_the_lead_only(client):
    project, _pairs_task, _truth = _task(6)
    lead = get_user_model().objects.create_user("lead", password="pw-lead-12345")
    Membership.objects.create(user=lead, project=project, role="lead")
    other = Project.objects.create(slug="other", name="Other")
    outsider = get_user_model().objects.create_user("outsider", password="pw-lead-12345")
    Membership.objects.create(user=outsider, project=other, role="lead")
    url = reverse("project-sampling", args=[project.slug])

    client.force_login(outsider)
    assert client.post(url, {"mode": "sample", "budget": "5"}).status_code == 404
    client.force_login(lead)
    page = client.get(reverse("project-settings", args=[project.slug])).content.decode()
    assert 'action="' + url + '"' in page and "Rate a sample chosen for information" in page
    answer = client.post(url, {"mode": "sample", "budget": "5"})
    assert answer.status_code == 302
    project.refresh_from_db()
    assert (project.rating_mode, project.rating_budget) == ("sample", 5)
    client.post(url, {"mode": "sample", "budget": "0"})  # refused: nothing changes
    project.refresh_from_db()
    assert project.rating_budget == 5
    client.post(url, {"mode": "all"})
    project.refresh_from_db()
    assert (project.rating_mode, project.rating_budget) == ("all", None)


def test_the_report_weighs_the_rated_prefix_back_as_active_mean_does():
    project, task, truth = _task(260)
    sample_start(project, budget=None)
    experts = [get_user_model().objects.create_user(f"x{n}") for n in range(2)]
    for expert in experts:
        Membership.objects.create(user=expert, project=project, role="annotator")
    task = Task.objects.select_related("project").get(pk=task.pk)
    for _ in range(60):  # 120 pairs, then the experts stop
        for expert in experts:
            assignment = assignment_claim(expert, task)
            left_better = (truth[assignment.pair_id] == "A") != assignment.swapped
            rating_submit(assignment.pk, expert, RatingInput(overall=2 if left_better else 6))
    report = project_report(project)
    figures = report["tasks"]["t2i"]["judges"]["weak"]["prediction_powered"]
    assert figures["design"] == "sample"

    # The same figure from the raw rows: the prefix before the first open pair, its inclusion
    # probabilities, Y and the leave-one-out prediction.
    design = {
        pk: (draw, weight, status in ("queued", "in_progress"))
        for pk, draw, weight, status in Pair.objects.values_list("pk", "draw", "weight", "status")
    }
    counted = counted_pairs(design, sampled=True)
    inclusion = dict(zip(counted.order, counted.inclusion(len(counted.order)), strict=True))
    assert 100 <= len(inclusion) <= 120
    labels = dict(Pair.objects.filter(status="kept").values_list("pk", "label"))
    choices: dict = {}
    for judge, pair_id, choice in Verdict.objects.values_list("judge__name", "pair_id", "choice"):
        choices.setdefault(judge, {}).setdefault(pair_id, []).append(choice)

    def share(judge, pair_id, side):
        return choices[judge][pair_id].count(side) / len(choices[judge][pair_id])

    def prediction(pair_id):
        a = sum(share(j, pair_id, "A") for j in choices if j != "weak")
        b = sum(share(j, pair_id, "B") for j in choices if j != "weak")
        return a / (a + b) * share("weak", pair_id, "A") + b / (a + b) * share("weak", pair_id, "B")

    rated = [p for p in sorted(design) if p in labels and p in inclusion]
    reference = active_mean(
        [share("weak", p, labels[p]) for p in rated],
        [prediction(p) for p in rated],
        [inclusion[p] for p in rated],
        [prediction(p) for p in sorted(design)],
    )
    assert figures["rated"] == len(rated) and figures["judged"] == 260
    assert (figures["status"], figures["used"]) == ("interim", len(rated))

    # The kept ratio's estimator (metrics/kept_ratio.py) on that input: with nothing dropped,
    # the Hájek form of active_mean: the two estimate the same accuracy, so they agree within
    # its sampling error (the draws, hence the gap between them, differ from run to run).
    def kept_ratio_estimate():
        return sample_estimate(
            [share("weak", p, labels[p]) for p in rated],
            [1.0] * len(rated),
            [prediction(p) for p in rated],
            [inclusion[p] for p in rated],
            [prediction(p) for p in sorted(design)],
            ends=(0.0, 1.0),
        )

    kept_ratio = kept_ratio_estimate()
    assert figures["estimate"] == pytest.approx(kept_ratio.estimate, abs=1e-6)
    assert abs(kept_ratio.estimate - reference.estimate) < 2 * reference.std_error
    # The interim interval: the monitored band around it (metrics/sequential.py), from the kept
    # ratio's standard error. The floor's pseudo-pairs only widen it; without them it estimates
    # the same spread as active_mean's (Hájek residuals against Horvitz–Thompson ones: from run
    # to run the two differ by 0.88 to 1.18 times, so the check is for a gross error only).
    assert figures["std_error"] == pytest.approx(kept_ratio.std_error, abs=1e-6)
    with patch.object(kept_ratio_module, "PSEUDO_WEIGHT", 0.0):
        unfloored = kept_ratio_estimate()
    assert unfloored.std_error < figures["std_error"]
    assert 2 / 3 < unfloored.std_error / reference.std_error < 3 / 2
    half = sequential.half_width(figures["std_error"], project.target_half_width)
    assert figures["low"] == pytest.approx(figures["estimate"] - half, abs=1e-5)  # rounded inputs


def test_a_skipped_pair_holds_later_ratings_back_and_the_lead_sees_which(client):
    project, task, truth = _task(30)
    sample_start(project, budget=None)
    first, second = (get_user_model().objects.create_user(f"x{n}") for n in range(2))
    lead = get_user_model().objects.create_user("lead")
    for user, role in ((first, "annotator"), (second, "annotator"), (lead, "lead")):
        Membership.objects.create(user=user, project=project, role=role)
    skipped = _claim(first, task)
    assignment_skip(skipped.pk, first, "unsure")
    for _ in range(3):
        assignment = _claim(first, task)
        assert assignment.pair_id != skipped.pair_id
        rating_submit(assignment.pk, first, RatingInput(overall=6))
    held = Pair.objects.get(pk=skipped.pair_id)
    assert project_report(project)["tasks"]["t2i"]["sample"] == {
        "counted": 0, "rated_after": 3, "waiting_on": held.external_id,
    }  # fmt: skip
    client.force_login(lead)
    page = client.get(reverse("dash-judges", args=[project.slug])).content.decode()
    assert f"pair {held.external_id}</a>, still open" in page
    assert reverse("dash-pair", args=[project.slug, held.pk]) in page

    taken = _claim(second, task)  # another expert rates it: the three count again
    assert taken.pair_id == held.pk
    rating_submit(taken.pk, second, RatingInput(overall=6))
    assert project_report(project)["tasks"]["t2i"]["sample"] == {
        "counted": 4, "rated_after": 0, "waiting_on": None,
    }  # fmt: skip
