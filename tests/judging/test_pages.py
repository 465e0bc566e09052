"""The lead's judging pages: access, judge form, starting/cancelling/resuming runs with
live progress, the ensemble filter page."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from content.models import Pair
from judging.models import Judge, JudgeRun, PromptTemplate, TaskEnsemble, Verdict
from judging.prompts import template_save
from judging.services.judges import connection_save, judge_save
from judging.services.runs import judge_run_start
from projects.models import Membership, Project
from tests.factories import member, queued_pairs
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def project(tmp_path):
    return queued_pairs(tmp_path, count=4).project


def _pages(project, run=None):
    urls = [
        reverse("judge-list", args=[project.slug]),
        reverse("judge-new", args=[project.slug]),
        reverse("template-list", args=[project.slug]),
        reverse("template-edit", args=[project.slug, "mmrb2-t2i"]),
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
    assert client.get(reverse("run-list", args=[project.slug])).status_code == 404
    assert client.get(reverse("run-detail", args=[other.slug, run.pk])).status_code == 404
    client.force_login(lead)
    for url in urls:
        assert client.get(url).status_code == 200, url


def queued_pairs_project(user):
    from projects.models import Project

    project = Project.objects.create(slug="elsewhere", name="Elsewhere")
    Membership.objects.create(user=user, project=project, role=Membership.Role.LEAD)
    return project


def test_a_lead_adds_a_judge_and_bad_values_are_refused(client, project, lead, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test")  # a judge whose key is unset is refused
    allowed, _ = connection_save(
        "allowed", backend="openai", base_url="http://127.0.0.1:9/v1",
        api_key_env="OPENAI_API_KEY", projects=[project],
    )  # fmt: skip
    connection_save("elsewhere", backend="openai", base_url="http://127.0.0.1:8/v1")
    client.force_login(lead)
    url = reverse("judge-new", args=[project.slug])
    form = client.get(url).content.decode()
    assert "allowed" in form and "elsewhere" not in form  # only what the operator allowed
    assert "127.0.0.1" not in form and "OPENAI_API_KEY" not in form  # never the URL or variable
    fields = {"name": "gpt", "backend": "openai", "model": "gpt-x", "connection": "allowed",
              "concurrency": 8, "requests_per_minute": 600, "timeout_seconds": 30,
              "sampling": '{"temperature": 0}', "templates": "{}",
              "price_input_per_mtok": "2.5", "price_output_per_mtok": "10"}  # fmt: skip
    for bad in (
        {"connection": "elsewhere"}, {"concurrency": 0}, {"concurrency": 32767},
        {"timeout_seconds": 86400}, {"sampling": "[1]"}, {"sampling": '{"stream": true}'},
        {"connection": ""}, {"templates": '{"t2i": "ghost"}'},
        # Found in review: each of these was a 500.
        {"sampling": "[" * 100_000 + "]" * 100_000}, {"sampling": '{"seed": ' + "9" * 5000 + "}"},
        {"sampling": '{"\\ud800": 1}'}, {"templates": '{"\\u0000": "mmrb2-t2i"}'},
    ):  # fmt: skip
        response = client.post(url, {**fields, **bad})
        assert response.status_code == 400, bad
        assert response.context["form"].errors, bad
    assert not Judge.objects.exists()
    assert client.post(url, fields).status_code == 302
    judge = Judge.objects.get(name="gpt")
    assert (judge.project, judge.connection, judge.sampling, judge.concurrency) == (
        project, allowed, {"temperature": 0}, 8,
    )  # fmt: skip
    assert "external" not in client.get(url).content.decode().split("backend")[1]
    edit = reverse("judge-edit", args=[project.slug, judge.pk])
    assert client.post(edit, {**fields, "concurrency": 16}).status_code == 302
    assert Judge.objects.get(pk=judge.pk).concurrency == 16
    client.post(reverse("judge-delete", args=[project.slug, judge.pk]))
    assert not Judge.objects.exists()


def test_another_projects_judges_and_the_operators_cannot_be_changed(client, project, lead):
    """Attack 2: judges were global; lead B re-pointed and deleted project A's judges."""
    other = Project.objects.create(slug="other", name="Other")
    theirs, _ = judge_save("theirs", project=other, backend="random")
    operators, _ = judge_save("shared", project=None, backend="always-a")
    client.force_login(lead)
    listing = client.get(reverse("judge-list", args=[project.slug])).content.decode()
    assert "Add a judge" in listing  # the settings page, not the judges dashboard
    assert "shared" in listing and "theirs" not in listing
    for judge in (theirs, operators):
        edit = reverse("judge-edit", args=[project.slug, judge.pk])
        assert client.get(edit).status_code == 404
        assert client.post(edit, {"name": "x", "backend": "random"}).status_code == 404
        delete = reverse("judge-delete", args=[project.slug, judge.pk])
        assert client.post(delete).status_code == 404
    assert Judge.objects.count() == 2
    # Runs take the project's judges and the operator's, never another project's.
    response = client.post(reverse("run-list", args=[project.slug]), {"judge": theirs.pk})
    assert response.status_code == 400 and not JudgeRun.objects.exists()


def test_a_lead_edits_a_built_in_template_as_a_copy_in_their_project(client, project, lead):
    other = Project.objects.create(slug="other", name="Other")
    template_save("house", "Theirs {prompt} {first} {second}", "json", other)
    client.force_login(lead)
    assert client.get(reverse("template-edit", args=[project.slug, "house"])).status_code == 404
    listing = client.get(reverse("template-list", args=[project.slug])).content.decode()
    assert "mmrb2-t2i" in listing and "house" not in listing
    url = reverse("template-edit", args=[project.slug, "mmrb2-t2i"])
    bad = client.post(url, {"answer_format": "json", "body": "no markers"})
    assert bad.status_code == 400
    body = "Strict. {prompt} {first} {second}"
    assert client.post(url, {"answer_format": "json", "body": body}).status_code == 302
    copy = PromptTemplate.objects.get(project=project)
    assert (copy.name, copy.version, copy.body) == ("mmrb2-t2i", 1, body)
    assert not PromptTemplate.objects.filter(project__isnull=True, body=body).exists()


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
    wait_until(  # embedded mode: the chunks run in a background thread
        lambda: JudgeRun.objects.get(pk=run.pk).status == "finished", 20, "the run to finish"
    )
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
    connection, _ = connection_save(
        "keyed", backend="openai", base_url="http://models.example/v1",
        api_key_env="MISSING_KEY_VAR", all_projects=True,
    )  # fmt: skip
    judge, _ = judge_save(
        "keyed", project=project, backend="openai", model="m", connection=connection
    )
    client.force_login(lead)
    response = client.post(
        reverse("run-list", args=[project.slug]), {"judge": judge.pk, "samples": 1}
    )
    assert response.status_code == 400
    assert "no key configured on the server" in response.content.decode()
    assert "MISSING_KEY_VAR" not in response.content.decode()
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


def test_ids_no_database_holds_are_refused_not_a_crash(client, project, lead):
    """Found in review: a 30-digit judge id was an OverflowError (500) on SQLite."""
    task = project.tasks.get()
    client.force_login(lead)
    huge = "9" * 30
    ensemble = client.post(
        reverse("ensemble", args=[project.slug]),
        {"task": task.slug, "action": "save", f"{task.slug}-judges": [huge]},
    )
    assert ensemble.status_code == 302 and not TaskEnsemble.objects.exists()
    run = client.post(reverse("run-list", args=[project.slug]), {"judge": huge, "samples": 1})
    assert run.status_code == 400 and not JudgeRun.objects.exists()
