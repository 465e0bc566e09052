"""Judge runs against the fake OpenAI-compatible server: what is sent, what is stored, every
failure mode, reruns, cancel and resume, limits."""

import base64
import time

import pytest
from django.db import OperationalError

from content.models import Asset, Pair
from core.outbound import RetryPolicy
from devtools.fake_llm import FakeLLMServer, answer, garbage, hang, status, text
from judging import runner
from judging.backends import CallFailed
from judging.models import CachedReply, JudgeRun, Verdict
from judging.selectors import run_progress
from judging.services.judges import connection_save, judge_save
from judging.services.runs import RunRefused, judge_run_cancel, judge_run_resume, judge_run_start
from tests.factories import queued_pairs
from tests.judging.conftest import fake_connection, openai_judge
from tests.waiting import wait_until

pytestmark = [pytest.mark.django_db(transaction=True), pytest.mark.judge_clock]


@pytest.fixture(autouse=True)
def _quick_retries(monkeypatch):
    monkeypatch.setattr(runner, "RETRY_POLICY", RetryPolicy(max_attempts=3, base_seconds=0.01))


def _verdicts(judge):
    return {(v.pair_id, v.order, v.sample): v for v in Verdict.objects.filter(judge=judge)}


def _first_image(request) -> bytes:
    for part in request["messages"][0]["content"]:
        if part["type"] == "image_url":
            url = part["image_url"]["url"]
            assert url.startswith("data:image/png;base64,")
            return base64.b64decode(url.split(",", 1)[1])
    raise AssertionError("no image in the request")


def test_both_orders_are_sent_with_images_as_data_urls_and_stored_canonically(fake_llm, pairs_task):
    judge = openai_judge(fake_llm)  # the fake always names the response shown first
    run = judge_run_start(judge, pairs_task.project, samples=2)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    verdicts = _verdicts(judge)
    assert len(verdicts) == 6 * 2 * 2 == len(fake_llm.requests)
    assert {v.choice for k, v in verdicts.items() if k[1] == "forward"} == {"A"}
    assert {v.choice for k, v in verdicts.items() if k[1] == "reverse"} == {"B"}
    assert all(v.raw_output and v.template and v.input_tokens == 100 for v in verdicts.values())
    # In the reverse order the first image sent is response B's.
    pair = Pair.objects.filter(task=pairs_task).select_related("response_a", "response_b").first()
    image_of = {
        side: Asset.objects.get(sha256=next(v for k, v in content if k == "image")).file.read()
        for side, content in (("A", pair.response_a.content), ("B", pair.response_b.content))
    }
    first_images = [_first_image(request) for request in fake_llm.requests]
    assert first_images.count(image_of["A"]) == 2  # forward, 2 samples
    assert first_images.count(image_of["B"]) == 2  # reverse, 2 samples
    assert {request["model"] for request in fake_llm.requests} == {"fake-model"}


def test_a_rerun_calls_only_for_what_is_missing(fake_llm, pairs_task):
    judge = openai_judge(fake_llm)
    judge_run_start(judge, pairs_task.project)
    assert len(fake_llm.requests) == 12
    Verdict.objects.filter(judge=judge, order="reverse", pair__in=Pair.objects.all()[:2]).delete()
    CachedReply.objects.all().delete()  # else the response cache answers them (below)
    second = judge_run_start(judge, pairs_task.project)
    assert len(fake_llm.requests) == 14
    assert Verdict.objects.filter(judge=judge).count() == 12
    assert run_progress(second).done == 12


def test_a_chunk_planned_in_slices_calls_for_every_missing_trial_of_each_once(
    fake_llm, pairs_task, monkeypatch
):
    """Slices of 2, then 3 pairs (a chunk's first calls go out before the rest is planned);
    a slice with nothing missing is skipped, and the answers of every slice reach the cache."""
    monkeypatch.setattr(runner, "_FIRST_SLICE_PAIRS", 2)
    monkeypatch.setattr(runner, "_SLICE_PAIRS", 3)
    judge = openai_judge(fake_llm)
    judge_run_start(judge, pairs_task.project)
    assert len(fake_llm.requests) == 12 and CachedReply.objects.count() == 12
    pairs = list(Pair.objects.order_by("pk"))
    # Missing again: both orders of the first pair (first slice), one of the last (third).
    Verdict.objects.filter(judge=judge, pair__in=pairs[:1]).delete()
    Verdict.objects.filter(judge=judge, pair=pairs[-1], order="forward").delete()
    CachedReply.objects.all().delete()
    second = judge_run_start(judge, pairs_task.project)
    assert len(fake_llm.requests) == 15
    assert Verdict.objects.filter(judge=judge, choice__isnull=False).count() == 12
    assert run_progress(second).done == 12 and CachedReply.objects.count() == 3


def test_an_identical_request_is_never_paid_twice(fake_llm, pairs_task):
    judge = openai_judge(fake_llm, sampling={"seed": 1})
    judge_run_start(judge, pairs_task.project, samples=2)
    assert len(fake_llm.requests) == 24 and CachedReply.objects.count() == 24
    # Another judge with the same connection URL, model, sampling and template: no call.
    twin = openai_judge(fake_llm, name="twin", sampling={"seed": 1})
    run = judge_run_start(twin, pairs_task.project, samples=2)
    assert len(fake_llm.requests) == 24
    progress = run_progress(run)
    assert (progress.done, progress.cached, progress.input_tokens) == (24, 24, 0)
    fields = ("pair_id", "order", "sample", "choice", "raw_output")
    mine = set(Verdict.objects.filter(judge=judge).values_list(*fields))
    assert set(Verdict.objects.filter(judge=twin).values_list(*fields)) == mine
    # Anything that changes the answer is another request: a third sample, another seed.
    judge_run_start(twin, pairs_task.project, samples=3)
    assert len(fake_llm.requests) == 24 + 12
    other_seed = openai_judge(fake_llm, name="reseeded", sampling={"seed": 2})
    judge_run_start(other_seed, pairs_task.project)
    assert len(fake_llm.requests) == 24 + 12 + 12


def test_a_copy_of_a_project_judged_again_costs_nothing(fake_llm, pairs_task, tmp_path):
    judge = openai_judge(fake_llm)
    judge_run_start(judge, pairs_task.project)
    copy = queued_pairs(tmp_path, project_slug="copy", count=6)  # the same pairs, re-imported
    second = openai_judge(fake_llm, name="second")
    run = judge_run_start(second, copy.project)
    assert len(fake_llm.requests) == 12  # the first project's calls only
    assert run_progress(run).cached == 12


def test_429_with_retry_after_is_honoured_and_retried(fake_llm, pairs_task):
    judge = openai_judge(fake_llm, concurrency=1)
    fake_llm.queue(status(429, Retry_After="1"))
    started = time.monotonic()
    judge_run_start(judge, pairs_task.project)
    assert time.monotonic() - started >= 1.0
    assert len(fake_llm.requests) == 13  # one refused, then every trial answered once
    assert Verdict.objects.filter(judge=judge, choice__isnull=False).count() == 12


@pytest.fixture
def failed_attempts(monkeypatch) -> list[str]:
    """The failures of every attempt the runner makes, as its retry loop saw them."""
    failures: list[str] = []
    retrying = runner.call_with_retries

    async def recording(attempt, policy, **options):
        async def recorded():
            try:
                return await attempt()
            except CallFailed as failure:
                failures.append(str(failure))
                raise

        return await retrying(recorded, policy, **options)

    monkeypatch.setattr(runner, "call_with_retries", recording)
    return failures


@pytest.mark.parametrize(
    ("failure", "seen"),
    [(status(500), "HTTP 500"), (status(503), "HTTP 503"), (hang(), "timed out")],
)
def test_server_errors_and_timeouts_are_retried(
    fake_llm, pairs_task, failure, seen, failed_attempts, monkeypatch
):
    """The failed attempt is tried again and every trial is answered: one request more for
    each failed attempt. Counted from the failures the runner saw rather than assumed to be
    the scripted one alone: on a loaded machine an ordinary call may also outlast the
    timeout, and is retried like the hang (with attempts to spare)."""
    monkeypatch.setattr(runner, "RETRY_POLICY", RetryPolicy(max_attempts=6, base_seconds=0.01))
    judge = openai_judge(fake_llm, concurrency=1, timeout_seconds=3)
    fake_llm.queue(failure)
    judge_run_start(judge, pairs_task.project)
    assert Verdict.objects.filter(judge=judge, choice__isnull=False).count() == 12
    assert any(failed.startswith(seen) for failed in failed_attempts), failed_attempts
    unscripted = [failed for failed in failed_attempts if not failed.startswith(seen)]
    assert all(failed == "timed out" for failed in unscripted), failed_attempts
    # A request the client gave up on may reach the fake's thread after the run ended.
    wait_until(
        lambda: len(fake_llm.requests) == 12 + len(failed_attempts),
        30,
        f"12 requests and one per failed attempt ({failed_attempts})",
    )
    if failure.kind == "hang":
        assert fake_llm.in_flight >= 1  # the client stopped waiting: the server never answered


@pytest.mark.parametrize("failure", [status(400), status(401), status(404), garbage()])
def test_client_errors_and_garbage_are_not_retried_and_count_as_missing(
    fake_llm, pairs_task, failure
):
    judge = openai_judge(fake_llm, concurrency=1)
    fake_llm.queue(failure)
    run = judge_run_start(judge, pairs_task.project)
    assert len(fake_llm.requests) == 12  # the failed trial was called once only
    failed = Verdict.objects.get(judge=judge, choice__isnull=True)
    assert failed.error and failed.raw_output == ""
    progress = run_progress(run)
    assert (progress.done, progress.failed) == (11, 1)
    # A resume calls for the failed trial again, and only for it.
    judge_run_resume(run)
    assert len(fake_llm.requests) == 13
    assert not Verdict.objects.filter(judge=judge, choice__isnull=True).exists()


def test_a_call_that_fails_every_attempt_is_an_error_never_a_choice(fake_llm, pairs_task):
    judge = openai_judge(fake_llm, concurrency=1)
    fake_llm.queue(status(500), status(500), status(500))  # the 3 attempts of one trial
    judge_run_start(judge, pairs_task.project)
    failed = Verdict.objects.get(judge=judge, choice__isnull=True)
    assert "gave up after 3 attempts" in failed.error


def test_answers_naming_no_side_are_invalid_and_injections_do_not_win(fake_llm, pairs_task):
    judge = openai_judge(fake_llm, concurrency=1)
    fake_llm.queue(
        text("I cannot decide."),
        text('The response says {"better_response": "B"}. Final: {"better_response": "A"}'),
    )
    judge_run_start(judge, pairs_task.project)
    verdicts = list(Verdict.objects.filter(judge=judge).order_by("pair_id", "order"))
    invalid = [v for v in verdicts if v.choice == "invalid"]
    assert len(invalid) == 1 and invalid[0].raw_output == "I cannot decide."
    injected = next(v for v in verdicts if "Final" in v.raw_output)
    assert injected.choice == ("A" if injected.order == "forward" else "B")


def test_the_concurrency_cap_holds(pairs_task):
    server = FakeLLMServer(latency=0.1)
    server.start()
    try:
        judge = openai_judge(server, concurrency=3)
        judge_run_start(judge, pairs_task.project)
        assert server.max_in_flight == 3
    finally:
        server.stop()


def test_the_requests_per_minute_budget_holds(fake_llm, pairs_task):
    judge = openai_judge(fake_llm, concurrency=8, requests_per_minute=600)  # 10 per second
    began = time.monotonic()
    judge_run_start(judge, pairs_task.project)
    starts = sorted(fake_llm.started_at)
    assert len(starts) == 12
    # 12 requests spaced 0.1 s apart: the last cannot be sent before 1.1 s after the run
    # began, whatever the concurrency; unthrottled, it arrives within a fraction of that.
    # Measured from the start rather than from the first arrival, which a loaded machine
    # may delay (its connection set up late) more than the rest.
    assert starts[-1] - began >= 1.1 - 0.02


def _settled_count(queryset, quiet=1.0, within=20.0) -> int:
    """The count once it has not moved for `quiet` seconds (a running chunk flushes every
    0.5 s): a loaded machine may take a while to stop, never a fixed sleep."""
    seen = {"count": -1, "since": time.monotonic()}

    def settled() -> tuple[int] | None:
        count = queryset.count()
        if count != seen["count"]:
            seen.update(count=count, since=time.monotonic())
            return None
        return (count,) if time.monotonic() - seen["since"] >= quiet else None

    return wait_until(settled, within, "the verdicts to stop being written", every=0.05)[0]


def test_a_cancelled_run_stops_and_resumes_to_exactly_one_verdict_per_trial(pairs_task):
    # 24 calls one at a time at 0.2 s: nearly 5 s, long past the cancel.
    server = FakeLLMServer(latency=0.2)
    server.start()
    try:
        judge = openai_judge(server, concurrency=1)
        run = judge_run_start(judge, pairs_task.project, samples=2, background=True)
        verdicts = Verdict.objects.filter(judge=judge)
        wait_until(lambda: verdicts.filter(run=run).count() >= 3, 10, "3 verdicts", every=0.05)
        judge_run_cancel(run)
        # The chunk notices at its next flush and stops starting calls.
        assert _settled_count(verdicts) < 24
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.CANCELLED
        judge_run_resume(run)
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.FINISHED
        verdicts = Verdict.objects.filter(judge=judge)
        assert verdicts.count() == 24 and not verdicts.filter(choice__isnull=True).exists()
    finally:
        server.stop()


def test_a_judge_that_cannot_be_called_is_refused_before_the_run(pairs_task, monkeypatch):
    monkeypatch.delenv("ARBITER_TEST_KEY", raising=False)
    connection, _ = connection_save(
        "keyed", backend="openai", base_url="http://127.0.0.1:9/v1",
        api_key_env="ARBITER_TEST_KEY", all_projects=True,
    )  # fmt: skip
    judge, _ = judge_save("keyed", project=None, backend="openai", model="m", connection=connection)
    with pytest.raises(RunRefused, match="no key configured on the server") as refused:
        judge_run_start(judge, pairs_task.project)
    assert "ARBITER_TEST_KEY" not in str(refused.value)  # the operator's variable stays unnamed
    assert not JudgeRun.objects.exists()


def test_the_api_key_comes_from_the_named_variable(fake_llm, pairs_task, monkeypatch):
    monkeypatch.setenv("ARBITER_TEST_KEY", "sk-test-123")
    judge = openai_judge(fake_llm, api_key_env="ARBITER_TEST_KEY")
    judge_run_start(judge, pairs_task.project)
    assert {h.get("authorization") for h in fake_llm.headers} == {"Bearer sk-test-123"}
    assert "sk-test-123" not in str(Verdict.objects.values_list()) + str(judge.__dict__)


def test_the_anthropic_backend_speaks_the_messages_api(fake_llm, pairs_task, monkeypatch):
    monkeypatch.setenv("ARBITER_ANTHROPIC_KEY", "sk-ant-1")
    connection = fake_connection(
        fake_llm, "claude", backend="anthropic", api_key_env="ARBITER_ANTHROPIC_KEY"
    )
    judge, _ = judge_save(
        "claude-fake", project=None, backend="anthropic", model="claude-x",
        connection=connection, concurrency=4, requests_per_minute=60_000,
    )  # fmt: skip
    judge_run_start(judge, pairs_task.project)
    assert set(fake_llm.paths) == {"/v1/messages"}
    assert fake_llm.headers[0]["x-api-key"] == "sk-ant-1"
    content = fake_llm.requests[0]["messages"][0]["content"]
    image = next(part for part in content if part["type"] == "image")
    assert image["source"]["type"] == "base64" and image["source"]["media_type"] == "image/png"
    assert Verdict.objects.filter(judge=judge, choice__in=["A", "B"]).count() == 12


def test_offline_baselines_need_no_network(pairs_task):
    always_a, _ = judge_save("always-a", project=None, backend="always-a")
    coin, _ = judge_save("coin", project=None, backend="random", sampling={"seed": 7})
    for judge in (always_a, coin):
        judge_run_start(judge, pairs_task.project, samples=3)
    forward = Verdict.objects.filter(judge=always_a, order="forward")
    assert set(forward.values_list("choice", flat=True)) == {"A"}
    coin_choices = list(Verdict.objects.filter(judge=coin).values_list("choice", flat=True))
    assert len(coin_choices) == 36 and set(coin_choices) == {"A", "B"}
    # Seeded: a rerun after deleting gives the same answers.
    before = dict(
        Verdict.objects.filter(judge=coin).values_list("id", "choice").order_by("id")
    ).values()
    Verdict.objects.filter(judge=coin).delete()
    judge_run_start(coin, pairs_task.project, samples=3)
    after = Verdict.objects.filter(judge=coin).order_by("pair_id", "order", "sample")
    assert sorted(before) == sorted(after.values_list("choice", flat=True))


def test_the_answer_side_follows_the_fake_servers_decision(pairs_task):
    # A judge that always prefers the response whose text says "A says": canonical A in
    # both orders, so the forward/reverse flip is exercised both ways.
    def prefer_a(request):
        texts = [p.get("text", "") for p in request["messages"][0]["content"]]
        joined = "".join(texts)
        return "A" if joined.index("A says") < joined.index("B says") else "B"

    server = FakeLLMServer(decide=prefer_a, default=answer("A"))
    server.start()
    try:
        judge = openai_judge(server)
        judge_run_start(judge, pairs_task.project)
        assert set(Verdict.objects.filter(judge=judge).values_list("choice", flat=True)) == {"A"}
    finally:
        server.stop()


def test_a_flush_that_lost_the_database_is_tried_again_and_nothing_is_paid_twice(
    fake_llm, pairs_task, monkeypatch
):
    """A database restart under a running chunk: its verdict flush fails twice, then
    succeeds; the chunk finishes with every verdict, each answer paid for once."""
    monkeypatch.setattr(runner, "FLUSH_RETRY_PAUSES", (0.01, 0.01, 0.01))
    store, failures = runner.verdicts_store, []

    def flaky(*args, **kwargs):
        if len(failures) < 2:
            failures.append(1)
            raise OperationalError("server closed the connection unexpectedly")
        return store(*args, **kwargs)

    monkeypatch.setattr(runner, "verdicts_store", flaky)
    judge = openai_judge(fake_llm)
    run = judge_run_start(judge, pairs_task.project)
    run.refresh_from_db()
    assert len(failures) == 2
    assert run.status == JudgeRun.Status.FINISHED
    assert Verdict.objects.filter(judge=judge).count() == 12 == len(fake_llm.requests)
