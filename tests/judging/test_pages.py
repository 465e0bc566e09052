"""The lead's judging pages: access, judge form, starting/cancelling/resuming runs with
live progress, the ensemble filter page."""

import time

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Membership, Pair
from judging.models import Judge, JudgeRun, TaskEnsemble, Verdict
from judging.services.runs import judge_run_start
from tests.annotate.conftest import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tmp_path):
    return queued_pairs(tmp_path, count=4).project


@pytest.fixture
def lead(project):
    return member("leader", project, role=Membership.Role.LEAD)


def _pages(project, run=None):
    urls = [
        reverse("judge-list"),
        reverse("judge-new"),
        reverse("run-list", args=[project.slug]),
        reverse("ensemble", args=[project.slug]),
    ]
    if run is not None:
        urls.append(reverse("run-detail", args=[project.slug, run.pk]))
    return urls


def test_only_leads_reach_the_judging_pages(client, project, lead):
    coin = Judge.objects.create(name="coin", backend="random")
    run = judge_run_start(coin, project)
    urls = _pages(project, run)
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and reverse("login") in response["Location"], url
    client.force_login(member("annotator", project))
    for url in urls:
        assert client.get(url).status_code == 403, url
    assert client.post(reverse("run-cancel", args=[project.slug, run.pk])).status_code == 403
    other_lead = User.objects.create_user("other-lead")
    other = queued_pairs_project(other_lead)
    client.force_login(other_lead)
    assert client.get(reverse("run-list", args=[project.slug])).status_code == 403
    assert client.get(reverse("run-detail", args=[other.slug, run.pk])).status_code == 404
    client.force_login(lead)
    for url in urls:
        assert client.get(url).status_code == 200, url


def queued_pairs_project(user):
    from annotation.models import Project

    project = Project.objects.create(slug="elsewhere", name="Elsewhere")
    Membership.objects.create(user=user, project=project, role=Membership.Role.LEAD)
    return project


def test_a_lead_adds_a_judge_and_bad_values_are_refused(client, lead):
    client.force_login(lead)
    bad = client.post(
        reverse("judge-new"),
        {"name": "gpt", "backend": "openai", "api_key_env": "sk-live 123", "concurrency": 0,
         "requests_per_minute": 60, "timeout_seconds": 30, "sampling": "[1]", "templates": "{}",
         "price_input_per_mtok": 0, "price_output_per_mtok": 0},
    )  # fmt: skip
    assert bad.status_code == 400
    body = bad.content.decode()
    assert "variable name, not a key" in body and "Expected a JSON object" in body
    assert not Judge.objects.exists()
    good = client.post(
        reverse("judge-new"),
        {"name": "gpt", "backend": "openai", "model": "gpt-x", "base_url": "http://127.0.0.1:9/v1",
         "api_key_env": "OPENAI_API_KEY", "concurrency": 8, "requests_per_minute": 600,
         "timeout_seconds": 30, "sampling": '{"temperature": 0}', "templates": "{}",
         "price_input_per_mtok": "2.5", "price_output_per_mtok": "10"},
    )  # fmt: skip
    assert good.status_code == 302
    judge = Judge.objects.get(name="gpt")
    assert (judge.api_key_env, judge.sampling, judge.concurrency) == (
        "OPENAI_API_KEY", {"temperature": 0}, 8,
    )  # fmt: skip
    assert "external" not in client.get(reverse("judge-new")).content.decode().split("backend")[1]


def test_the_progress_fragment_polls_while_running_and_stops_when_done(client, project, lead):
    coin = Judge.objects.create(name="coin", backend="random")
    run = JudgeRun.objects.create(judge=coin, project=project, trials=8, status="running")
    client.force_login(lead)
    url = reverse("run-detail", args=[project.slug, run.pk])
    fragment = client.get(url, HTTP_HX_REQUEST="true").content.decode()
    assert fragment.startswith('<section id="run-progress"') and 'hx-trigger="every 2s"' in fragment
    assert "Cancel run" in fragment
    JudgeRun.objects.filter(pk=run.pk).update(status="finished")
    assert "hx-trigger" not in client.get(url, HTTP_HX_REQUEST="true").content.decode()


@pytest.mark.django_db(transaction=True)
def test_start_a_run_from_the_page_and_watch_it_finish(client, project, lead):
    coin = Judge.objects.create(name="coin", backend="random")
    client.force_login(lead)
    response = client.post(
        reverse("run-list", args=[project.slug]), {"judge": coin.pk, "samples": 2}
    )
    run = JudgeRun.objects.get()
    assert response["Location"] == reverse("run-detail", args=[project.slug, run.pk])
    deadline = time.monotonic() + 20  # embedded mode: the chunks run in a background thread
    while JudgeRun.objects.get(pk=run.pk).status != "finished" and time.monotonic() < deadline:
        time.sleep(0.05)
    assert Verdict.objects.filter(run=run).count() == 4 * 2 * 2
    body = client.get(response["Location"]).content.decode()
    assert "Finished" in body and "16" in body


def test_cancel_and_resume_buttons(client, project, lead):
    coin = Judge.objects.create(name="coin", backend="random")
    run = JudgeRun.objects.create(judge=coin, project=project, trials=8, status="running")
    client.force_login(lead)
    client.post(reverse("run-cancel", args=[project.slug, run.pk]))
    assert JudgeRun.objects.get(pk=run.pk).status == "cancelled"
    again = client.post(reverse("run-cancel", args=[project.slug, run.pk]), follow=True)
    assert "only a pending or running run stops" in again.content.decode()


def test_a_refused_start_is_explained(client, project, lead, monkeypatch):
    monkeypatch.delenv("MISSING_KEY_VAR", raising=False)
    judge = Judge.objects.create(
        name="keyed",
        backend="openai",
        model="m",
        base_url="http://x/v1",
        api_key_env="MISSING_KEY_VAR",
    )
    client.force_login(lead)
    response = client.post(
        reverse("run-list", args=[project.slug]), {"judge": judge.pk, "samples": 1}
    )
    assert response.status_code == 400
    assert "MISSING_KEY_VAR is not set" in response.content.decode()
    assert not JudgeRun.objects.exists()


def test_the_ensemble_page_saves_judges_and_threshold(client, project, lead):
    coin = Judge.objects.create(name="coin", backend="random")
    task = project.tasks.get()
    client.force_login(lead)
    url = reverse("ensemble", args=[project.slug])
    client.post(url, {"task": task.slug, "action": "save", f"{task.slug}-judges": [coin.pk],
                      f"{task.slug}-threshold": "0.8"})  # fmt: skip
    ensemble = TaskEnsemble.objects.get(task=task)
    assert ensemble.threshold == 0.8 and list(ensemble.judges.all()) == [coin]
    refused = client.post(url, {"task": task.slug, "action": "run"}, follow=True)
    assert "has no candidate pairs" in refused.content.decode()
    Pair.objects.update(status="candidate")
    page = client.get(url).content.decode()
    assert "4 candidates" in page


@pytest.mark.django_db(transaction=True)  # the runner writes verdicts from its own thread
def test_the_run_list_counts_every_run_in_a_fixed_number_of_queries(client, project, lead):
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    coin = Judge.objects.create(name="coin", backend="random")
    outside = Judge.objects.create(name="outside", backend="external")
    imported = JudgeRun.objects.create(
        judge=outside, project=project, purpose="import", status="finished", trials=2
    )
    pair = Pair.objects.filter(project=project).first()
    Verdict.objects.create(judge=outside, pair=pair, run=imported, order="forward", choice="A")
    Verdict.objects.create(
        judge=outside, pair=pair, run=imported, order="reverse", error="empty judgement"
    )
    judge_run_start(coin, project)
    client.force_login(lead)
    url = reverse("run-list", args=[project.slug])
    with CaptureQueriesContext(connection) as few:
        page = client.get(url)
    by_run = {run.pk: run for run in page.context["runs"]}
    assert (by_run[imported.pk].done, by_run[imported.pk].failed) == (1, 1)
    assert max(run.done for run in by_run.values()) == 4 * 2  # the random judge's run
    for _ in range(3):
        judge_run_start(coin, project)
    with CaptureQueriesContext(connection) as many:
        client.get(url)
    assert len(many) == len(few)
