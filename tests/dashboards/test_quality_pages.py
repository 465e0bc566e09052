"""The lead's quality-control pages: gold checks set from the pair page, the
agreement page's table of gold accuracy, flags and competence, re-admitting a paused annotator,
and the task's settings; another project's lead gets 404 for every id."""

import io
import json

import pytest
from django.core.management import call_command
from django.urls import reverse

from annotation.models import AnnotatorPause, GoldAnswer
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from judging.models import Judge, Verdict
from judging.services.ensemble import ensemble_apply, ensemble_set
from projects.models import Membership, Task
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path):
    task = queued_pairs(tmp_path, count=12)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    other = queued_pairs(tmp_path, project_slug="rival", count=2)
    rival = member("rival-lead", other.project, role=Membership.Role.LEAD)
    return task, lead, rival


def logged_in(client, user):
    client.force_login(user)
    return client


def test_a_lead_makes_a_pair_gold_from_its_page_and_turns_it_back(client, site):
    task, lead, _rival = site
    pair = Pair.objects.filter(task=task).first()
    page = reverse("dash-pair", args=["ann", pair.pk])
    assert "Make this a gold check" in logged_in(client, lead).get(page).content.decode()
    url = reverse("dash-pair-gold", args=["ann", pair.pk])
    response = client.post(url, {"side": "b", "explanation": "B follows the prompt"})
    assert response.status_code == 302
    gold = GoldAnswer.objects.get(pair=pair)
    assert (gold.side, gold.explanation, gold.set_by) == ("B", "B follows the prompt", lead)
    html = client.get(page).content.decode()
    assert "Expected side: <strong>B</strong>" in html
    client.post(url, {"side": "maybe"}, follow=True)
    assert GoldAnswer.objects.get(pair=pair).side == "B"  # refused with a message, no change
    client.post(url, {"action": "unset"})
    assert Pair.objects.get(pk=pair.pk).status == Pair.Status.QUEUED
    assert not GoldAnswer.objects.exists()


def test_another_projects_lead_cannot_set_gold_or_readmit(client, site):
    task, _lead, rival = site
    pair = Pair.objects.filter(task=task).first()
    annotator = member("someone", task.project)
    AnnotatorPause.objects.create(task=task, annotator=annotator, reason="0 of 5")
    logged_in(client, rival)
    for url in [
        reverse("dash-pair-gold", args=["ann", pair.pk]),
        reverse("dash-pair-gold", args=["rival", pair.pk]),  # their project, not their pair
        reverse("dash-readmit", args=["ann", "t2i", annotator.pk]),
    ]:
        assert client.post(url, {"side": "A"}).status_code in (403, 404), url
    # In their own task the id names nobody paused there: nothing happens, nothing leaks.
    assert (
        client.post(reverse("dash-readmit", args=["rival", "t2i", annotator.pk])).status_code == 302
    )
    assert not GoldAnswer.objects.exists()
    assert AnnotatorPause.objects.get(annotator=annotator).readmitted_at is None


def test_the_agreement_page_shows_gold_flags_competence_and_readmits(client, site):
    task, lead, _rival = site
    Task.objects.filter(pk=task.pk).update(
        gold_rate=0.5, gold_action=Task.GoldAction.PAUSE, gold_min_answers=4
    )
    task.refresh_from_db()
    client.force_login(lead)
    for pk in Pair.objects.filter(task=task).values_list("pk", flat=True)[:4]:
        client.post(reverse("dash-pair-gold", args=["ann", pk]), {"side": "A"})
    sloppy = member("sloppy", task.project)
    while (assignment := assignment_claim(sloppy, task)) is not None:
        wrong = 2 if assignment.swapped else 6  # B better, whatever side it was shown on
        rating_submit(assignment.pk, sloppy, RatingInput(overall=wrong, active_seconds=0.3))
    assert AnnotatorPause.objects.filter(annotator=sloppy, readmitted_at=None).exists()
    html = client.get(reverse("dash-agreement", args=["ann"])).content.decode()
    assert "Quality control" in html and "sloppy" in html
    assert '0.00 <span class="muted">[0.00, 0.49] n=4</span>' in html
    assert "<strong>fast</strong>" in html
    assert "Re-admit sloppy" in html
    # The competence columns and the consensus with and without weighting, from the report's
    # own figures.
    out = io.StringIO()
    call_command("report", project="ann", json=True, stdout=out)
    figures = json.loads(out.getvalue())["tasks"]["t2i"]
    competence = figures["annotators"]["sloppy"]["competence"]
    row = html[html.index(">sloppy</a></td>") :].split("</tr>")[0]  # linked to their page
    for model in ("mace", "dawid_skene"):
        assert f'<td class="num">{competence[model]:.3f}</td>' in row, model
    ds = figures["competence_consensus"]["dawid_skene"]
    assert (
        f"{ds['kept_changed']} of {ds['kept_compared']} kept pairs would get another label "
        f"and {ds['dropped_decided']} of {ds['dropped_compared']} dropped pairs would be decided"
    ) in html
    response = client.post(reverse("dash-readmit", args=["ann", "t2i", sloppy.pk]))
    assert response.status_code == 302 and response.url.endswith("#quality-t2i")
    assert not AnnotatorPause.objects.filter(annotator=sloppy, readmitted_at=None).exists()
    assert (
        "Re-admit sloppy"
        not in client.get(reverse("dash-agreement", args=["ann"])).content.decode()
    )


def test_the_task_form_saves_the_quality_settings_and_refuses_bad_ones(client, site):
    task, lead, _rival = site
    url = reverse("task-edit", args=["ann", "t2i"])
    form = {
        "slug": "t2i", "name": "Text to image", "kind": "t2i", "aspects": "", "guidelines": "",
        "gold_rate": "0.2", "gold_min_accuracy": "0.8", "gold_min_answers": "4",
        "gold_action": "pause", "min_active_seconds": "5",
    }  # fmt: skip
    assert logged_in(client, lead).post(url, form).status_code == 302
    task.refresh_from_db()
    assert (task.gold_rate, task.gold_min_accuracy, task.gold_min_answers) == (0.2, 0.8, 4)
    assert (task.gold_action, task.min_active_seconds) == ("pause", 5.0)
    for field, bad in [("gold_rate", "0.9"), ("gold_min_accuracy", "-1"), ("gold_action", "x")]:
        response = client.post(url, {**form, field: bad})
        assert response.status_code == 400, field
    task.refresh_from_db()
    assert task.gold_rate == 0.2


def test_the_ensemble_page_turns_unanimous_easy_pairs_into_gold_checks(client, site):
    task, lead, rival = site
    Pair.objects.filter(task=task).update(status=Pair.Status.CANDIDATE)
    judge = Judge.objects.create(name="sure", backend="always-a", project=task.project)
    ensemble_set(task, [judge])
    Verdict.objects.bulk_create(  # a judge that names A in both orders, on every pair
        Verdict(judge=judge, pair=pair, order=order, choice="A")
        for pair in Pair.objects.filter(task=task)
        for order in Verdict.Order.values
    )
    ensemble_apply(task)
    assert set(Pair.objects.filter(task=task).values_list("status", flat=True)) == {"easy"}
    url = reverse("ensemble", args=["ann"])
    assert logged_in(client, rival).post(url, {"task": "t2i", "action": "gold"}).status_code in (
        403,
        404,
    )
    assert not GoldAnswer.objects.exists()
    page = logged_in(client, lead).get(url).content.decode()
    assert "Make the easy pairs the ensemble judged unanimously gold checks" in page
    response = client.post(url, {"task": "t2i", "action": "gold"}, follow=True)
    assert "12 easy pairs of" in response.content.decode()
    assert GoldAnswer.objects.filter(pair__task=task, side="A").count() == 12
