"""The judge form: what can be checked without a call is checked at save time, the templates a
judge can name are listed, and a Test call button makes one request through the backend."""

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.test import Client
from django.urls import reverse

from devtools.fake_llm import FakeLLMServer, status, text
from judging.models import Judge, PromptTemplate, Verdict
from judging.prompts import template_save
from judging.services.judges import connection_save, judge_save
from projects.models import Membership, Project
from tests.factories import member, queued_pairs
from tests.judging.conftest import fake_connection

pytestmark = pytest.mark.django_db

KEY_VAR = "ARBITER_TEST_JUDGE_KEY"


@pytest.fixture(autouse=True)
def _fresh_cache():
    cache.clear()  # the test-call spacing lives there; ids repeat between tests
    yield
    cache.clear()


@pytest.fixture
def project(tmp_path):
    return queued_pairs(tmp_path, count=2).project


FIELDS = {"name": "gpt", "backend": "openai", "model": "gpt-x", "connection": "keyed",
          "concurrency": 4, "requests_per_minute": 60, "timeout_seconds": 5,
          "sampling": "{}", "templates": "{}",
          "price_input_per_mtok": "0", "price_output_per_mtok": "0"}  # fmt: skip


def test_a_judge_that_could_not_call_is_refused_at_save_time(client, project, lead, monkeypatch):
    monkeypatch.delenv(KEY_VAR, raising=False)
    connection_save(
        "keyed", backend="openai", base_url="http://127.0.0.1:9/v1", api_key_env=KEY_VAR,
        all_projects=True,
    )  # fmt: skip
    connection_save("ours", backend="openai", base_url="http://127.0.0.1:9/v1", projects=[project])
    connection_save("claude", backend="anthropic", base_url="http://127.0.0.1:9", all_projects=True)
    client.force_login(lead)
    url = reverse("judge-new", args=[project.slug])
    response = client.post(url, FIELDS)
    assert response.status_code == 400
    error = " ".join(response.context["form"].errors["connection"])
    assert "no key configured on the server" in error
    assert KEY_VAR not in response.content.decode()  # the variable is the operator's
    for bad, field in (
        ({"connection": "ours", "model": ""}, "model"),
        ({"connection": "ours", "templates": '{"text2image": "mmrb2-t2i"}'}, "templates"),
        ({"connection": "ours", "templates": '{"t2i": "house"}'}, "templates"),
        ({"connection": "claude"}, "connection"),  # an Anthropic connection for an OpenAI judge
    ):
        response = client.post(url, {**FIELDS, **bad})
        assert response.status_code == 400, bad
        assert field in response.context["form"].errors, bad
    assert not Judge.objects.exists()
    monkeypatch.setenv(KEY_VAR, "sk-test")
    assert client.post(url, FIELDS).status_code == 302
    template_save("house", "Ours {prompt} {first} {second}", "json", project)
    edit = reverse("judge-edit", args=[project.slug, Judge.objects.get().pk])
    assert client.post(edit, {**FIELDS, "templates": '{"t2i": "house"}'}).status_code == 302
    assert Judge.objects.get().templates == {"t2i": "house"}
    # Baselines need none of it.
    baseline = {**FIELDS, "name": "coin", "backend": "random", "model": "", "connection": ""}
    assert client.post(url, baseline).status_code == 302


def test_the_form_lists_the_templates_a_judge_can_name(client, project, lead):
    other = Project.objects.create(slug="other", name="Other")
    template_save("theirs", "Theirs {prompt} {first} {second}", "json", other)
    template_save("house", "Ours {prompt} {first} {second}", "mjbench", project)
    template_save("mmrb2-edit", "Edited {prompt} {first} {second}", "json", project)
    client.force_login(lead)
    body = client.get(reverse("judge-new", args=[project.slug])).content.decode()
    listing = body.split('id="judge-templates"')[1].split("</section>")[0]
    for name in ("mmrb2-t2i", "mmrb2-reasoning", "mjbench-t2i", "house", "mmrb2-edit"):
        assert f"<code>{name}</code>" in listing, name
    assert "theirs" not in listing
    assert "replaces the built-in" in listing and "task kinds: t2i" in listing
    assert 'id="judge-test-call"' not in body  # nothing saved to test yet


def _api_judge(server, project, backend="openai", **settings):
    connection = fake_connection(server, f"fake-{backend}", backend=backend)
    judge, _ = judge_save(
        f"{backend}-judge", project=project, backend=backend, connection=connection,
        model="fake-model", timeout_seconds=5, **settings,
    )  # fmt: skip
    return judge


def _messages(response) -> list[str]:
    return [str(m) for m in response.context["messages"]]


def test_a_test_call_makes_one_request_and_shows_the_parsed_answer(client, project, lead, fake_llm):
    judge = _api_judge(fake_llm, project)
    client.force_login(lead)
    edit = reverse("judge-edit", args=[project.slug, judge.pk])
    assert 'id="judge-test-call"' in client.get(edit).content.decode()
    url = reverse("judge-test-call", args=[project.slug, judge.pk])
    response = client.post(url, follow=True)
    assert response.redirect_chain == [(edit, 302)]
    [message] = _messages(response)
    assert message.startswith("Test call answered A (right) in ")
    assert "template mmrb2-t2i, 100 tokens in, 20 out." in message
    assert fake_llm.served == 1
    [sent] = fake_llm.requests
    assert sent["model"] == "fake-model" and "What is 2 + 2?" in str(sent["messages"])
    # Right away again: refused without a request.
    again = client.post(url, follow=True)
    assert "tested a moment ago" in _messages(again)[0] and fake_llm.served == 1
    # Nothing was stored.
    assert not Verdict.objects.exists() and not PromptTemplate.objects.exists()


def test_a_pointwise_judges_test_call_scores_the_right_answer_alone(client, project, lead):
    server = FakeLLMServer(score=lambda request: 9)
    server.start()
    try:
        judge = _api_judge(server, project, templates={"t2i": "pointwise-1-10"})
        client.force_login(lead)
        url = reverse("judge-test-call", args=[project.slug, judge.pk])
        [message] = _messages(client.post(url, follow=True))
        assert message.startswith("Test call scored the right answer 9 on 1-10 in ")
        assert "template pointwise-1-10" in message
        [sent] = server.requests
        content = str(sent["messages"])
        assert (
            "What is 2 + 2?" in content and "[Response]" in content and "Response B" not in content
        )
        cache.clear()
        server.queue(text("SCORE: 11"))  # off the scale
        [message] = _messages(client.post(url, follow=True))
        assert message.startswith(
            "Test call: the reply holds no score on its scale with template pointwise-1-10"
        )
    finally:
        server.stop()


def test_a_failed_test_call_shows_the_status_never_the_body(client, project, lead, fake_llm):
    judge = _api_judge(fake_llm, project, backend="anthropic")
    client.force_login(lead)
    url = reverse("judge-test-call", args=[project.slug, judge.pk])
    fake_llm.queue(status(500))
    response = client.post(url, follow=True)
    assert _messages(response) == ["Test call failed: HTTP 500 Internal Server Error"]
    assert "fake 500" not in response.content.decode()
    assert fake_llm.served == 1  # one attempt: a test call is never retried
    assert fake_llm.paths == ["/v1/messages"]
    cache.clear()
    fake_llm.queue(text("<b>I refuse</b> to pick"))
    response = client.post(url, follow=True)
    [message] = _messages(response)
    assert "names no side" in message and "refuse" not in response.content.decode()


def test_a_test_call_of_a_judge_that_cannot_call_makes_no_request(
    client, project, lead, fake_llm, monkeypatch
):
    monkeypatch.setenv(KEY_VAR, "sk-test")
    connection = fake_connection(fake_llm, "keyed", api_key_env=KEY_VAR)
    judge, _ = judge_save(
        "keyed", project=project, backend="openai", connection=connection, model="m"
    )
    monkeypatch.delenv(KEY_VAR)  # unset on the server after the save
    client.force_login(lead)
    response = client.post(reverse("judge-test-call", args=[project.slug, judge.pk]), follow=True)
    [message] = _messages(response)
    assert message.startswith("Test call failed: connection 'keyed' has no key configured")
    assert KEY_VAR not in response.content.decode()
    assert fake_llm.served == 0


def test_the_test_call_is_for_the_projects_leads_and_posts_only(project, lead, fake_llm):
    judge = _api_judge(fake_llm, project)
    url = reverse("judge-test-call", args=[project.slug, judge.pk])
    client = Client()
    response = client.post(url)
    assert response.status_code == 302 and reverse("login") in response["Location"]
    client.force_login(member("annotator", project))
    assert client.post(url).status_code == 403
    other_lead = User.objects.create_user("other-lead")
    other = Project.objects.create(slug="elsewhere", name="Elsewhere")
    Membership.objects.create(user=other_lead, project=other, role=Membership.Role.LEAD)
    client.force_login(other_lead)
    assert client.post(url).status_code == 404
    assert client.post(reverse("judge-test-call", args=[other.slug, judge.pk])).status_code == 404
    client.force_login(lead)
    operators, _ = judge_save("shared", project=None, backend="always-a")
    assert (
        client.post(reverse("judge-test-call", args=[project.slug, operators.pk])).status_code
        == 404
    )
    assert client.get(url).status_code == 405
    strict = Client(enforce_csrf_checks=True)
    strict.force_login(lead)
    assert strict.post(url).status_code == 403
    assert fake_llm.served == 0
