"""Outbound calls: a lead cannot make the server send a request to a URL of their choosing,
and no secret leaves except a connection's own key, to that connection's own URL.

Reproduced before the fix (issue "Trust boundaries", attacks 1-3): a lead created a judge
with `api_key_env=SECRET_KEY` and `base_url` = their listener, through the API, the judge
page or the admin, and received the server's SECRET_KEY as a bearer token; redirects were
followed; the reply body came back in the verdict's error.
"""

import pytest
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from devtools import fake_llm as fake_server
from devtools.fake_llm import FakeLLMServer
from judging.models import Judge, JudgeRun, Verdict
from judging.services import runs as runs_service
from judging.services.judges import connection_save, judge_save
from judging.services.runs import RunRefused, judge_run_start
from tests.factories import api_key, queued_pairs
from tests.judging.conftest import fake_connection

pytestmark = pytest.mark.django_db(transaction=True)

SECRET = "server-secret-value-that-must-not-leave"


@pytest.fixture
def listener():
    """The attacker's server: it must never be called."""
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def project(tmp_path):
    return queued_pairs(tmp_path, count=2).project


def _api(user) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {api_key(user)}")
    return client


def test_a_lead_cannot_point_a_judge_at_their_listener_or_at_a_server_variable(
    project, lead, listener, fake_llm, monkeypatch
):
    monkeypatch.setenv("ARBITER_PROBE_SECRET", SECRET)
    fake_connection(fake_llm, "allowed", api_key_env="ARBITER_TEST_KEY", projects=[project],
                    all_projects=False)  # fmt: skip
    monkeypatch.setenv("ARBITER_TEST_KEY", "sk-connection-key")
    hostile = {"base_url": listener.base_url, "api_key_env": "ARBITER_PROBE_SECRET"}
    # The API refuses the fields outright.
    answer = _api(lead).post(
        "/api/judges/",
        {"project": project.slug, "name": "evil", "backend": "openai", "model": "m", **hostile},
        format="json",
    )
    assert answer.status_code == 400 and {"base_url", "api_key_env"} <= set(answer.json())
    # The page has no such fields: whatever is posted, the judge calls its connection.
    page = Client()
    page.force_login(lead)
    fields = {"name": "evil", "backend": "openai", "model": "m", "connection": "allowed",
              "concurrency": 2, "requests_per_minute": 600, "timeout_seconds": 5,
              "price_input_per_mtok": 0, "price_output_per_mtok": 0}  # fmt: skip
    page.post(reverse("judge-new", args=[project.slug]), {**fields, **hostile})
    judge = Judge.objects.get(name="evil")
    # The admin is closed to leads.
    assert page.get("/admin/judging/judge/add/").status_code == 302
    assert page.post("/admin/judging/judge/add/", {"name": "x"}).status_code == 302
    judge_run_start(judge, project)
    assert listener.served == 0
    assert fake_llm.served == 2 * 2
    assert {h.get("authorization") for h in fake_llm.headers} == {"Bearer sk-connection-key"}
    assert SECRET not in str(fake_llm.requests) + str(fake_llm.headers)


def test_redirects_are_not_followed_and_errors_carry_no_reply_body(project, listener, fake_llm):
    connection = fake_connection(fake_llm, "redirecting")
    judge, _ = judge_save(
        "j", project=project, backend="openai", model="m", connection=connection,
        timeout_seconds=5,
    )  # fmt: skip
    fake_llm.queue(
        fake_server.status(302, Location=listener.base_url + "/chat/completions"),
        fake_server.status(307, Location=listener.base_url + "/chat/completions"),
        fake_server.status(400),  # its body says "fake 400"
        fake_server.text("fine"),  # not JSON-wrapped answers are still answers
    )
    fake_llm.default = fake_server.garbage()
    judge_run_start(judge, project)
    assert listener.served == 0  # neither redirect was followed
    errors = list(Verdict.objects.exclude(error="").values_list("error", flat=True))
    assert "HTTP 302 Found" in errors and "HTTP 307 Temporary Redirect" in errors
    assert "HTTP 400 Bad Request" in errors
    assert not any("fake 400" in error or "Location" in error for error in errors)
    assert all(len(error) < 120 for error in errors)


def test_a_connection_withdrawn_from_the_project_stops_its_runs(project, fake_llm, monkeypatch):

    connection = fake_connection(fake_llm, "lent", projects=[project], all_projects=False)
    judge, _ = judge_save("j", project=project, backend="openai", model="m", connection=connection)
    connection_save("lent", projects=[])
    with pytest.raises(RunRefused, match="not allowed for this project"):
        judge_run_start(judge, project)
    # A run accepted before the withdrawal stops at its next chunk without calling.
    connection_save("lent", projects=[project])
    started = []
    monkeypatch.setattr(runs_service, "_enqueue", lambda ids, background, run: started.extend(ids))
    run = judge_run_start(judge, project)
    monkeypatch.undo()
    connection_save("lent", projects=[])
    for chunk_id in started:
        runs_service.judge_chunk_run(chunk_id)
    assert fake_llm.served == 0
    assert JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.CANCELLED


def test_sampling_can_never_override_the_request(project, fake_llm):
    """Found in review: a judge row whose sampling holds "model", "messages" or "n" (saved
    before sampling was checked) had them merged into the provider's request body."""
    connection = fake_connection(fake_llm, "plain")
    judge, _ = judge_save(
        "j", project=project, backend="openai", model="cheap", connection=connection,
        sampling={"temperature": 0.5},
    )  # fmt: skip
    Judge.objects.filter(pk=judge.pk).update(
        sampling={"temperature": 0.5, "model": "o1-pro", "n": 128, "messages": [], "stream": 1}
    )
    judge_run_start(Judge.objects.get(pk=judge.pk), project)
    sent = fake_llm.requests[0]
    assert sent["model"] == "cheap" and sent["temperature"] == 0.5
    assert "n" not in sent and "stream" not in sent and sent["messages"][0]["content"]


@pytest.mark.parametrize("name", ["SECRET_KEY", "database_url", "REDIS_URL", "EMAIL_HOST_PASSWORD"])
def test_a_connection_never_names_arbiters_own_secrets(name):
    from core.errors import Invalid
    from judging.services.judges import connection_save

    with pytest.raises(Invalid, match="Arbiter's own secret"):
        connection_save(
            "leaky", backend="openai", base_url="http://127.0.0.1:9/v1", api_key_env=name
        )
