"""Judge runs through the providers' batch APIs, against the fake server's
OpenAI files + /v1/batches and Anthropic /v1/messages/batches: the same verdicts as live
calls, collected by a poll that may die half way and be done again, half the price."""

import hashlib
import json
from decimal import Decimal
from io import StringIO

import pytest
from django.core.management import call_command
from django.test import Client
from django.urls import reverse

from content.models import Pair
from core.scheduled_jobs import scheduler_start
from devtools.fake_llm import FakeLLMServer, answer, status
from judging import provider_batches
from judging.backends import CallFailed
from judging.models import CachedReply, JudgeRun, ProviderBatch, Verdict
from judging.selectors import run_progress
from judging.services import batches as batch_services
from judging.services.batches import batches_poll
from judging.services.judges import judge_save
from judging.services.runs import (
    RunRefused,
    judge_run_cancel,
    judge_run_resume,
    judge_run_start,
)
from judging.tasks import judge_batches_poll
from projects.models import Membership
from tests.api.conftest import token_client
from tests.factories import member, queued_pairs
from tests.judging.conftest import fake_connection, openai_judge
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db(transaction=True)
FIELDS = ("pair_id", "order", "sample", "choice", "raw_output")


def by_content(request) -> str:
    """A deterministic judge whose side depends on what it is shown (so orders differ)."""
    digest = hashlib.sha256(json.dumps(request["messages"]).encode()).digest()
    return "A" if digest[0] % 2 else "B"


@pytest.fixture
def server():
    fake = FakeLLMServer(decide=by_content, batch_seconds=3600)
    fake.start()
    yield fake
    fake.stop()


def end_batches(server):
    for batch in server.batches.values():
        batch["ends_at"] = 0


def verdicts(judge):
    return set(Verdict.objects.filter(judge=judge).values_list(*FIELDS))


def test_a_batch_run_stores_exactly_the_verdicts_of_a_live_run_at_half_the_price(
    server, pairs_task
):
    live = openai_judge(server, name="live", sampling={"seed": 1})
    judge_run_start(live, pairs_task.project, samples=2)
    assert server.served == 24
    # Another seed: the same answers from the fake, but not the response cache's requests.
    batched = openai_judge(
        server, name="batched", sampling={"seed": 2}, price_input_per_mtok=Decimal("10")
    )
    run = judge_run_start(batched, pairs_task.project, samples=2, mode=JudgeRun.Mode.BATCH)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.RUNNING  # submitted: the answers come later
    assert server.served == 24  # no live call
    assert len(server.batch_requests) == 24
    assert [p for p in server.paths if p.startswith("POST")] == [
        "POST /v1/files",
        "POST /v1/batches",
    ]
    batch = ProviderBatch.objects.get(run=run)
    assert (batch.status, batch.provider_id) == (ProviderBatch.Status.IN_PROGRESS, "batch_1")

    assert batches_poll() == []  # still in progress: nothing stored
    assert not Verdict.objects.filter(judge=batched).exists()
    assert ProviderBatch.objects.get(pk=batch.pk).provider_status == "in_progress"

    end_batches(server)
    assert batches_poll() == [run]
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert verdicts(batched) == verdicts(live)
    assert {c for *_, c, _ in verdicts(live)} == {"A", "B"}  # both sides occur
    progress = run_progress(run)
    assert (progress.done, progress.input_tokens) == (24, 24 * 100)
    # 2,400 input tokens at 10 per million: 0.024 live, half of it as a batch.
    assert progress.as_dict()["cost"] == 0.012 and progress.as_dict()["cost_saved"] == 0.012
    # The answers are in the response cache: a live twin of the batch judge pays nothing.
    assert CachedReply.objects.count() == 48
    twin = openai_judge(server, name="twin", sampling={"seed": 2})
    judge_run_start(twin, pairs_task.project, samples=2)
    assert server.served == 24 and verdicts(twin) == verdicts(batched)


def test_a_poll_that_dies_while_storing_is_done_again_by_the_next_one(
    server, pairs_task, monkeypatch
):
    judge = openai_judge(server)
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    end_batches(server)
    real_store = batch_services.verdicts_store

    def dies_half_way(chunk, rows, replies, **fields):
        real_store(chunk, rows[: len(rows) // 2], replies)
        raise SystemExit("worker killed")  # not an Exception: nothing may catch it

    monkeypatch.setattr(batch_services, "verdicts_store", dies_half_way)
    with pytest.raises(SystemExit):
        judge_batches_poll()
    assert Verdict.objects.filter(judge=judge).count() == 6
    assert ProviderBatch.objects.get(run=run).status == ProviderBatch.Status.IN_PROGRESS
    monkeypatch.setattr(batch_services, "verdicts_store", real_store)
    judge_batches_poll()  # a new worker's poll
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert Verdict.objects.filter(judge=judge, choice__in=["A", "B"]).count() == 12
    assert len(server.batch_requests) == 12  # sent once


def test_a_chunk_delivered_again_does_not_submit_twice(server, pairs_task):
    judge = openai_judge(server)
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    from judging.tasks import judge_chunk

    judge_chunk(run.chunks.get().pk)  # the broker delivers it again (a worker died)
    assert len(server.batch_requests) == 12
    assert ProviderBatch.objects.filter(run=run).count() == 1


def test_anthropic_batches_errors_fail_alone_and_a_resume_sends_only_them(server, pairs_task):
    connection = fake_connection(server, "claude", backend="anthropic")
    judge, _ = judge_save(
        "claude-batch", project=None, backend="anthropic", model="claude-x",
        connection=connection, concurrency=4,
    )  # fmt: skip
    server.queue(answer("A"), status(500))  # the second request of the batch errs
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    assert "POST /v1/messages/batches" in server.paths
    end_batches(server)
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    failed = Verdict.objects.get(judge=judge, choice__isnull=True)
    assert failed.error == "batch request errored"
    assert run_progress(run).failed == 1
    judge_run_resume(run)
    assert len(server.batch_requests) == 13  # only the failed trial again
    end_batches(server)
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert not Verdict.objects.filter(judge=judge, choice__isnull=True).exists()
    assert Verdict.objects.filter(judge=judge).count() == 12


def test_a_pointwise_batch_scores_each_response_alone(pairs_task):
    server = FakeLLMServer(score=lambda request: 7, batch_seconds=0)
    server.start()
    try:
        judge = openai_judge(server, name="scorer", templates={"t2i": "pointwise-1-10"})
        run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
        batches_poll()
        run.refresh_from_db()
        assert run.status == JudgeRun.Status.FINISHED
        assert len(server.batch_requests) == 12  # 6 pairs × 2 responses
        rows = Verdict.objects.filter(judge=judge)
        assert set(rows.values_list("order", "score_a", "score_b", "choice")) == {
            ("pointwise", 7.0, 7.0, "tie")
        }
    finally:
        server.stop()


def test_a_provider_cannot_write_other_verdicts_or_steer_the_urls(server, pairs_task, tmp_path):
    other = queued_pairs(tmp_path, project_slug="other", count=1)
    victim = Pair.objects.get(task=other)
    judge = openai_judge(server)
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    end_batches(server)
    batch = server.batches["batch_1"]
    forged = {"custom_id": f"{victim.pk}-f-0", "response": {"status_code": 200, "body": {
        "choices": [{"message": {"content": '{"better_response": "A"}'}}]}}}  # fmt: skip
    batch["results"] += json.dumps(forged).encode() + b"\nnot json\n[1, 2]\n"
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert not Verdict.objects.filter(pair=victim).exists()
    assert Verdict.objects.filter(judge=judge).count() == 12
    # Ids the provider returns go into paths only when they are plain ids.
    for hostile in ("../../admin", "batch_1/../x", "a?b=1", "", None, 7):
        with pytest.raises(CallFailed):
            provider_batches._checked_id(hostile, "batch id")


def test_a_refused_submission_fails_its_trials_for_a_resume(server, pairs_task, monkeypatch):
    judge = openai_judge(server)

    async def refuse(session, judge, lines):
        raise CallFailed("HTTP 400 Bad Request", retryable=False)

    monkeypatch.setattr(batch_services, "submit", refuse)
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert ProviderBatch.objects.get(run=run).status == ProviderBatch.Status.FAILED
    errors = set(Verdict.objects.filter(judge=judge).values_list("error", flat=True))
    assert errors == {"the provider refused the batch (HTTP 400 Bad Request)"}
    monkeypatch.undo()
    judge_run_resume(run)
    end_batches(server)
    batches_poll()
    assert Verdict.objects.filter(judge=judge, choice__in=["A", "B"]).count() == 12


def test_only_api_judges_run_as_batches(pairs_task):
    coin, _ = judge_save("coin", project=None, backend="random")
    with pytest.raises(RunRefused, match="batch"):
        judge_run_start(coin, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    with pytest.raises(RunRefused, match="mode"):
        judge_run_start(coin, pairs_task.project, mode="overnight")


@pytest.fixture
def quick_server(settings):
    """Batches that end at once, polled every second by the embedded mode's scheduler thread
    (the scheduled job judge-batches-poll, as on a server; core/scheduled_jobs.py) and by
    `judge_run --wait`."""
    settings.ARBITER_BATCH_POLL_SECONDS = 1
    settings.ARBITER_SCHEDULER_IN_PROCESS = True
    fake = FakeLLMServer(decide=by_content, batch_seconds=0)
    fake.start()
    scheduler = scheduler_start()
    assert scheduler is not None
    yield fake
    scheduler.stop()
    fake.stop()


def wait_finished(run, seconds=15):
    def finished():
        run.refresh_from_db()
        return run.status == JudgeRun.Status.FINISHED

    wait_until(finished, seconds, f"run {run.pk} to finish", every=0.2)
    return run


def test_a_lead_starts_a_batch_run_from_the_page_and_sees_its_batches(quick_server, pairs_task):
    judge = openai_judge(quick_server, project=pairs_task.project)
    client = Client()
    client.force_login(member("batchlead", pairs_task.project, role=Membership.Role.LEAD))
    runs_url = reverse("run-list", args=[pairs_task.project.slug])
    assert "Provider batch (about half the price" in client.get(runs_url).content.decode()
    answer = client.post(runs_url, {"judge": judge.pk, "samples": 1, "mode": "batch"})
    assert answer.status_code == 302
    run = wait_finished(JudgeRun.objects.get(judge=judge))  # the scheduled poll collected it
    assert run.mode == JudgeRun.Mode.BATCH and len(quick_server.batch_requests) == 12
    page = client.get(answer["Location"]).content.decode()
    assert "Provider batch" in page and "Answers stored (completed)" in page
    assert "batch price" in page
    refused = client.post(runs_url, {"judge": judge.pk, "samples": 1, "mode": "overnight"})
    assert refused.status_code == 400


def test_the_api_and_the_command_line_start_batch_runs(quick_server, pairs_task):
    judge = openai_judge(quick_server, name="api-batch", project=pairs_task.project)
    lead = member("apilead", pairs_task.project, role=Membership.Role.LEAD)
    body = {"project": "ann", "judge": judge.pk, "mode": "batch"}
    answer = token_client(lead).post("/api/runs/", body, format="json")
    assert answer.status_code == 201, answer.content
    assert answer.json()["mode"] == "batch"
    wait_finished(JudgeRun.objects.get(pk=answer.json()["id"]))
    assert (
        token_client(lead).post("/api/runs/", {**body, "mode": "x"}, format="json").status_code
        == 400
    )

    out = StringIO()
    other = openai_judge(quick_server, name="cli-batch", sampling={"seed": 5})
    call_command(
        "judge_run", project="ann", judge="cli-batch", batch=True, wait=True, json=True, stdout=out
    )
    outcome = json.loads(out.getvalue())
    assert (outcome["status"], outcome["mode"], outcome["done"]) == ("finished", "batch", 12)
    assert verdicts(other) == verdicts(judge)


@pytest.mark.parametrize("backend", ["openai", "anthropic"])
def test_a_cancelled_run_cancels_its_batches_at_the_provider(server, pairs_task, backend):
    if backend == "openai":
        judge = openai_judge(server)
    else:
        judge, _ = judge_save(
            "claude-cancel", project=None, backend="anthropic", model="claude-x",
            connection=fake_connection(server, "claude-c", backend="anthropic"),
        )  # fmt: skip
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    judge_run_cancel(run)
    batches_poll()  # sees it in progress: asks the provider to cancel
    assert any(path.endswith("/cancel") for path in server.paths)
    batches_poll()  # ended without answers: failures, for a resume
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED
    assert ProviderBatch.objects.get(run=run).status == ProviderBatch.Status.COLLECTED
    assert Verdict.objects.filter(judge=judge, choice__isnull=True).count() == 12
    judge_run_resume(run)
    end_batches(server)
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert Verdict.objects.filter(judge=judge, choice__in=["A", "B"]).count() == 12


def test_a_chunk_still_being_sent_is_not_closed_by_a_poll_of_its_first_parts(
    server, pairs_task, monkeypatch
):
    monkeypatch.setattr(batch_services, "MAX_BATCH_REQUESTS", 4)  # 12 requests: 3 parts
    real_submit_part = batch_services._submit_part
    seen = []

    def submit_then_poll(chunk, number, part, templates):
        real_submit_part(chunk, number, part, templates)
        end_batches(server)
        batches_poll()  # another worker's poll, while the next parts are being built
        run = JudgeRun.objects.get(pk=chunk.run_id)
        seen.append((run.status, Verdict.objects.filter(run=run).count()))

    monkeypatch.setattr(batch_services, "_submit_part", submit_then_poll)
    run = judge_run_start(openai_judge(server), pairs_task.project, mode=JudgeRun.Mode.BATCH)
    assert seen == [("running", 4), ("running", 8), ("running", 12)]
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED  # closed by the submission, once all is in
    assert ProviderBatch.objects.filter(run=run).count() == 3


def test_one_batch_that_cannot_be_read_neither_stops_the_others_nor_waits_forever(
    server, pairs_task, monkeypatch
):
    monkeypatch.setenv("ARBITER_TEST_BATCH_KEY", "sk-1")
    keyed = openai_judge(server, name="keyed", api_key_env="ARBITER_TEST_BATCH_KEY")
    stuck = judge_run_start(keyed, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    other = judge_run_start(
        openai_judge(server, name="other"), pairs_task.project, mode=JudgeRun.Mode.BATCH
    )
    monkeypatch.delenv("ARBITER_TEST_BATCH_KEY")  # the operator removed the key meanwhile
    end_batches(server)
    assert batches_poll() == [other]
    batch = ProviderBatch.objects.get(run=stuck)
    assert batch.status == ProviderBatch.Status.IN_PROGRESS and batch.poll_failures == 1
    assert "no key configured" in batch.error and "ARBITER_TEST" not in batch.error
    for _ in range(batch_services.MAX_POLL_FAILURES - 1):
        batches_poll()
    stuck.refresh_from_db()
    assert stuck.status == JudgeRun.Status.FINISHED  # given up: its trials failed, for a resume
    assert ProviderBatch.objects.get(run=stuck).status == ProviderBatch.Status.FAILED
    assert Verdict.objects.filter(judge=keyed, choice__isnull=True).count() == 12
    # A hostile answer (content parts without text, absurd nesting) is a failure, not a crash.
    judge = openai_judge(server, name="odd", sampling={"seed": 9})  # not in the cache
    odd = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    end_batches(server)
    lines = server.batches[ProviderBatch.objects.get(run=odd).provider_id]
    first, second, *rest = lines["results"].splitlines()
    shaped = json.loads(first)
    shaped["response"]["body"]["choices"][0]["message"]["content"] = [{"text": None}, 5]
    nested = json.loads(second)
    lines["results"] = b"\n".join(
        [json.dumps(shaped).encode(), b'{"custom_id": ' + b"[" * 100_000, *rest]
    )
    assert batches_poll() == [odd]
    trial = batch_services.trial_of(nested["custom_id"])
    unread = Verdict.objects.get(judge=judge, pair_id=trial.pair_id, order=trial.order)
    assert unread.choice is None and "no answer" in unread.error


def test_a_run_cancelled_while_its_parts_are_sent_stops_sending_and_resumes_the_rest(
    server, pairs_task, monkeypatch
):
    monkeypatch.setattr(batch_services, "MAX_BATCH_REQUESTS", 4)  # 12 requests: 3 parts
    real_submit_part = batch_services._submit_part

    def submit_then_cancel(chunk, number, part, templates):
        real_submit_part(chunk, number, part, templates)
        judge_run_cancel(JudgeRun.objects.get(pk=chunk.run_id))  # the lead, meanwhile

    monkeypatch.setattr(batch_services, "_submit_part", submit_then_cancel)
    judge = openai_judge(server)
    run = judge_run_start(judge, pairs_task.project, mode=JudgeRun.Mode.BATCH)
    monkeypatch.setattr(batch_services, "_submit_part", real_submit_part)
    assert len(server.batch_requests) == 4  # the first part only
    unsent = Verdict.objects.filter(judge=judge, error="not sent: the run was cancelled")
    assert unsent.count() == 8
    end_batches(server)
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.CANCELLED
    judge_run_resume(run)  # the 8 unsent trials go out now
    assert len(server.batch_requests) == 12
    end_batches(server)
    batches_poll()
    run.refresh_from_db()
    assert run.status == JudgeRun.Status.FINISHED
    assert Verdict.objects.filter(judge=judge, choice__in=["A", "B"]).count() == 12
