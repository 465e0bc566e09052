"""Adaptive concurrency: a judge allowed 128 calls at once against an API that takes
24 finds the API's capacity instead of hammering it, answers every trial, and stops every call
for as long as a Retry-After asks. (Throughput against the same server is measured by
`make bench-judges`, not timed here.)"""

import asyncio

import pytest
from django.test import Client
from django.urls import reverse

from devtools.fake_llm import FakeLLMServer, status
from imports.services.pair_import import pairs_import
from judging import runner
from judging.models import Connection, Judge, JudgeRunChunk, Verdict
from judging.prompts import Message
from judging.rate_limits import DECREASE, DEEPEST_CUT, INITIAL_WINDOW, Window
from judging.retry import RetryPolicy
from judging.services.runs import judge_run_start
from projects.models import Membership, Project
from tests.factories import member, write_jsonl
from tests.judging.conftest import openai_judge

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.judge_clock]


def _text_pairs(tmp_path, count: int):
    records = [
        {"id": f"p{n}", "prompt_source": "unit", "prompt_content": [["text", f"question {n}"]],
         "response_a": {"model_name": "m1", "response_content": [["text", f"A says {n}"]]},
         "response_b": {"model_name": "m2", "response_content": [["text", f"B says {n}"]]}}
        for n in range(count)
    ]  # fmt: skip
    summary = pairs_import(write_jsonl(tmp_path / "p.jsonl", records), project_slug="cap",
                           task_slug="t2i")  # fmt: skip
    return Project.objects.get(slug=summary.project)


def test_the_window_grows_then_halves_its_growth_after_an_overload():
    window = Window(ceiling=128)
    assert window.slots == INITIAL_WINDOW
    for _ in range(INITIAL_WINDOW):
        window.succeeded()
    assert window.slots == 2 * INITIAL_WINDOW  # slow start: doubles per round
    episode = window.episode  # the calls below were let through now
    assert window.overloaded(episode, slot_number=2 * INITIAL_WINDOW)
    cut = window.slots
    assert cut == int(2 * INITIAL_WINDOW * DECREASE)
    assert not window.overloaded(episode, slot_number=3)  # let through before the cut: no news
    for _ in range(cut):
        window.succeeded()
    assert window.slots == cut + 1  # past an overload: one more slot per round


def test_an_overload_cuts_to_where_the_refused_call_stood_but_never_below_half():
    window = Window(ceiling=128)
    for _ in range(INITIAL_WINDOW):  # slow start overshoots: 32 slots
        window.succeeded()
    assert window.slots == 2 * INITIAL_WINDOW
    assert window.overloaded(window.episode, slot_number=25)  # the API took 24
    assert window.slots == int(25 * DECREASE)  # one cut, not three of 0.9 each
    assert window.overloaded(window.episode, slot_number=1)
    assert window.slots == int(25 * DECREASE * DEEPEST_CUT)
    while window.slots > 1:
        window.overloaded(window.episode, slot_number=1)
    assert window.overloaded(window.episode, slot_number=1) and window.slots == 1


def test_a_128_slot_judge_finds_a_24_call_api_and_answers_everything(tmp_path, monkeypatch):
    monkeypatch.setattr(runner, "RETRY_POLICY", RetryPolicy(max_attempts=12, base_seconds=0.2))
    project = _text_pairs(tmp_path, 300)
    server = FakeLLMServer(latency=0.2, capacity=24, record=False)
    server.start()
    try:
        judge = openai_judge(server, concurrency=128, requests_per_minute=100_000)
        judge_run_start(judge, project)
    finally:
        server.stop()
    assert (
        Verdict.objects.filter(choice="A").count() + Verdict.objects.filter(choice="B").count()
        == 600
    )  # every trial answered
    assert server.refused / server.served < 0.05, (server.refused, server.served)
    [chunk] = JudgeRunChunk.objects.all()
    slots = [window for _at, window in chunk.concurrency_log]
    assert slots[0] == INITIAL_WINDOW and max(slots) < 128
    assert 18 <= slots[-1] <= 30  # settled around the API's capacity
    # The run page draws it.
    client = Client()
    client.force_login(member("caplead", project, role=Membership.Role.LEAD))
    page = client.get(reverse("run-detail", args=[project.slug, chunk.run_id])).content.decode()
    assert "<polyline points=" in page and f"now {slots[-1]};" in page


def test_a_retry_after_pauses_every_call_of_the_judge(tmp_path):
    project = _text_pairs(tmp_path, 4)
    server = FakeLLMServer(latency=0.05)
    server.queue(status(429, retry_after="3"))
    server.start()
    try:
        judge = openai_judge(server, concurrency=8, requests_per_minute=100_000, timeout_seconds=30)
        judge_run_start(judge, project)
        first = server.started_at[0]
        starts = [t - first for t in server.started_at]
    finally:
        server.stop()
    # The eight trials went out together (concurrency 8); the one refused was sent again
    # only after the 3 s the server asked for.
    ordered = sorted(starts)
    assert len(ordered) == 9
    assert ordered[7] < 3.0 <= ordered[8]
    outcomes = list(Verdict.objects.values_list("choice", "error"))
    assert len(outcomes) == 8 and all(choice for choice, _error in outcomes), outcomes


def test_what_counts_as_an_overload():
    """429 and 529 shrink the window; another 5xx is retried but is no overload; Anthropic's
    `overloaded_error` body counts even when it comes with a 200."""
    from judging import backends

    for code, overloaded in ((429, True), (529, True), (503, False)):
        with pytest.raises(backends.CallFailed) as failed:
            backends.checked_json(code, {}, "{}")
        assert failed.value.retryable and failed.value.overloaded is overloaded

    async def overloaded_body(*_args):
        return {"type": "error", "error": {"type": "overloaded_error", "message": "busy"}}

    judge = Judge(name="c", backend="anthropic", model="m", sampling={})
    judge.connection = Connection(name="x", backend="anthropic", base_url="http://127.0.0.1:9")
    original, backends._post = backends._post, overloaded_body
    try:
        with pytest.raises(backends.CallFailed) as failed:
            asyncio.run(backends.call_anthropic(None, judge, Message([("text", "hi")]), 0))
    finally:
        backends._post = original
    assert failed.value.overloaded and failed.value.retryable
