"""Judge runs through a provider's batch API (about half the price, answers within 24 hours).

A batch-mode chunk is submitted instead of called: its missing trials (less those the
response cache already answers, which are stored at once) become requests, sent in parts of
at most MAX_BATCH_REQUESTS requests and MAX_BATCH_BYTES bytes, one ProviderBatch row each.
The row is written before the provider is asked, so the database is the truth: a poll
(batches_poll, a scheduled job every ARBITER_BATCH_POLL_SECONDS in either mode, or the
command line) asks each waiting batch how it is going, and an ended one's answers are read
and stored exactly as live answers are (the same parsing, the same upserts, the response
cache), then the chunk closes and, with its last chunk, the run. A poll that dies half way
is simply done again by the next one: the upserts make storing twice harmless.

Trial ↔ request: the custom id encodes the trial ("<pair>-<f|r|p>-<sample>", and "-A"/"-B"
for each response of a pointwise trial); only ids this batch sent are ever read back.
"""

import asyncio
import logging
import re
from dataclasses import dataclass, field

import aiohttp
from django.db.models import F
from django.utils import timezone

from content.models import Pair
from core.outbound import client_session
from judging.backends import (
    CallFailed,
    ConfigurationError,
    Reply,
    anthropic_request,
    openai_request,
)
from judging.contents import UNSENDABLE, PairContents, Trial
from judging.models import Judge, JudgeRun, JudgeRunChunk, PromptTemplate, ProviderBatch, Verdict
from judging.provider_batches import (
    anthropic_line,
    cancel,
    openai_line,
    results,
    state,
    submit,
)
from judging.retry import Outcome
from judging.runner import (
    cached_verdict,
    chunk_plan,
    response_cache,
    trial_verdict,
    unsent_verdict,
    verdicts_store,
)
from judging.services.run_finish import chunk_close

log = logging.getLogger(__name__)

# Well inside both providers' limits (OpenAI: 50,000 requests and 200 MB a file; Anthropic:
# 100,000 requests and 256 MB a batch), and a part's requests are held in memory.
MAX_BATCH_REQUESTS = 10_000
MAX_BATCH_BYTES = 96 * 1024 * 1024
_ORDER_CODES: dict[str, str] = {
    Verdict.Order.FORWARD: "f",
    Verdict.Order.REVERSE: "r",
    Verdict.Order.POINTWISE: "p",
}
_ORDERS = {code: order for order, code in _ORDER_CODES.items()}
_CUSTOM_ID = re.compile(r"(\d{1,12})-([frp])-(\d{1,3})(?:-([AB]))?")
_TRANSFER_TIMEOUT_SECONDS = 600  # uploading a part, downloading its answers
MAX_POLL_FAILURES = 20  # in a row (10 minutes at the default poll): the batch is given up


def custom_id(trial: Trial, side: str = "") -> str:
    code = f"{trial.pair_id}-{_ORDER_CODES[trial.order]}-{trial.sample}"
    return f"{code}-{side}" if side else code


def trial_of(request_id: str) -> Trial:
    match = _CUSTOM_ID.fullmatch(request_id)
    if match is None:  # the ids are ours (custom_id), stored with the batch
        raise ValueError(f"not a request id of Arbiter's: {request_id!r}")
    pair_id, order, sample, _side = match.groups()
    return Trial(int(pair_id), _ORDERS[order], int(sample))


def request_ids(trial: Trial) -> list[str]:
    """The custom ids of a trial's requests: one, or one per response (A then B)."""
    if trial.order == Verdict.Order.POINTWISE:
        return [custom_id(trial, "A"), custom_id(trial, "B")]
    return [custom_id(trial)]


@dataclass
class _Part:
    """Requests gathered for one provider batch."""

    lines: list = field(default_factory=list)
    requests: dict = field(default_factory=dict)  # custom id -> [cache key, adapted]
    size: int = 0

    def full(self) -> bool:
        return len(self.lines) >= MAX_BATCH_REQUESTS or self.size >= MAX_BATCH_BYTES


def _line(judge: Judge, request_id: str, message, sample: int) -> bytes:
    if judge.backend == Judge.Backend.OPENAI:
        return openai_line(request_id, openai_request(judge, message, sample)[1])
    return anthropic_line(request_id, anthropic_request(judge, message, sample)[1])


def _session() -> aiohttp.ClientSession:
    return client_session(total_seconds=_TRANSFER_TIMEOUT_SECONDS)


async def _with_session(call, *args):
    async with _session() as session:
        return await call(session, *args)


def batch_chunk_submit(chunk: JudgeRunChunk) -> bool:
    """Submit the chunk's missing trials; True when nothing is left to wait for (every
    trial answered from the cache or failed before it could be sent)."""
    run = chunk.run
    JudgeRunChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1, submitting=True)
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.PENDING).update(
        status=JudgeRun.Status.RUNNING, started_at=timezone.now()
    )
    try:
        # A part the provider never confirmed (the worker died between asking and
        # recording) is sent again; parts it holds are waited for, not sent twice.
        ProviderBatch.objects.filter(chunk=chunk, status=ProviderBatch.Status.SUBMITTING).delete()
        waiting = _waiting_request_ids(chunk)
        pairs, templates, trials = chunk_plan(chunk)
        trials = [t for t in trials if request_ids(t)[0] not in waiting]
        if trials:
            _submit_trials(chunk, pairs, templates, trials)
    finally:
        JudgeRunChunk.objects.filter(pk=chunk.pk).update(submitting=False)
    return not ProviderBatch.objects.filter(
        chunk=chunk, status=ProviderBatch.Status.IN_PROGRESS
    ).exists()


def _submit_trials(chunk: JudgeRunChunk, pairs: list, templates: dict, trials: list) -> None:
    """Store what needs no request (cache hits, content that cannot be sent) and send the
    rest in parts, each submitted as soon as it is full (memory holds one part)."""
    run = chunk.run
    contents = PairContents(pairs, trials, run.judge.backend)
    cache = response_cache(run, trials, contents, templates)
    if cache is None:  # only an API judge's run is sent as a provider batch
        raise ValueError(f"judge {run.judge.name!r} is not called through an API")
    settled, part = [], _Part()
    parts = ProviderBatch.objects.filter(chunk=chunk).values_list("part", flat=True)
    number = 1 + max(parts, default=-1)
    for position, trial in enumerate(trials):
        template = templates[contents.pairs[trial.pair_id].task_id]
        if (replies := cache.replies(trial)) is not None:
            settled.append(cached_verdict(run, template, trial, replies))
            continue
        try:
            messages, adapted = contents.messages(template, trial)
        except UNSENDABLE as error:
            error_text = f"cannot send the pair's content: {error}"
            settled.append(unsent_verdict(run, template, trial, error_text))
            continue
        ids = request_ids(trial)
        for request_id, message, key in zip(ids, messages, cache.keys[trial], strict=True):
            line = _line(run.judge, request_id, message, trial.sample)
            part.lines.append(line)
            part.size += len(line)
            part.requests[request_id] = [key, adapted]
        if part.full():
            _submit_part(chunk, number, part, templates)
            number, part = number + 1, _Part()
            if JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.CANCELLED).exists():
                # Cancelled meanwhile: the rest is not sent, stored as failures that a resume
                # sends (a trial without any verdict would look done to the resume).
                settled += [
                    unsent_verdict(
                        run,
                        templates[contents.pairs[rest.pair_id].task_id],
                        rest,
                        "not sent: the run was cancelled",
                    )
                    for rest in trials[position + 1 :]
                ]
                break
    if part.lines:
        _submit_part(chunk, number, part, templates)
    verdicts_store(chunk, settled, [])


def _waiting_request_ids(chunk: JudgeRunChunk) -> set[str]:
    waiting = set()
    for requests in ProviderBatch.objects.filter(
        chunk=chunk, status=ProviderBatch.Status.IN_PROGRESS
    ).values_list("requests", flat=True):
        waiting.update(requests)
    return waiting


def _submit_part(chunk: JudgeRunChunk, number: int, part: _Part, templates: dict) -> None:
    run = chunk.run
    batch = ProviderBatch.objects.create(
        run=run,
        chunk=chunk,
        part=number,
        requests=part.requests,
        request_count=len(part.requests),
        templates={str(task_id): template.pk for task_id, template in templates.items()},
    )
    try:
        provider_id = asyncio.run(_with_session(submit, run.judge, part.lines))
    except CallFailed as failure:
        log.warning("run %s: batch %s refused: %s", run.pk, batch.pk, failure)
        batch.status, batch.error = (
            ProviderBatch.Status.FAILED,
            f"submission failed: {failure}"[:500],
        )
        batch.save(update_fields=["status", "error"])
        # Stored as failures, which a resume of the run sends again.
        _store_answers(batch, {}, f"the provider refused the batch ({failure})")
        return
    recorded = ProviderBatch.objects.filter(
        pk=batch.pk, status=ProviderBatch.Status.SUBMITTING
    ).update(
        provider_id=provider_id,
        status=ProviderBatch.Status.IN_PROGRESS,
        submitted_at=timezone.now(),
    )
    if not recorded:  # another delivery of the chunk took over meanwhile: not paid twice
        log.warning("run %s: batch %s superseded; cancelling it", run.pk, provider_id)
        _cancel_at_provider(run.judge, provider_id)


def batches_poll(limit: int = 100) -> list[JudgeRun]:
    """Ask every waiting batch (the least recently asked first) how it is going and store
    the answers of those that ended; the runs this finished (for their follow-ups)."""
    finished = []
    waiting = (
        ProviderBatch.objects.filter(status=ProviderBatch.Status.IN_PROGRESS)
        .select_related("run__judge__connection", "chunk")
        .order_by(F("polled_at").asc(nulls_first=True), "pk")[:limit]
    )
    for batch in waiting:
        # Recorded first: a batch that fails every poll does not stay first in line.
        ProviderBatch.objects.filter(pk=batch.pk).update(polled_at=timezone.now())
        try:
            run = batch_poll(batch)
        except Exception as error:  # one batch's trouble never stops the others' polls
            run = _poll_failed(batch, error)
        if run is not None:
            finished.append(run)
    return finished


def _poll_failed(batch: ProviderBatch, error: Exception) -> JudgeRun | None:
    """Asked again next time, unless the batch can never be read (the provider refuses, or
    MAX_POLL_FAILURES in a row): then its trials fail, for a resume."""
    if isinstance(error, CallFailed | ConfigurationError):
        reason = str(error)
        log.warning("batch %s (run %s): poll failed: %s", batch.pk, batch.run_id, reason)
    else:
        reason = f"internal error ({type(error).__name__})"
        log.exception("batch %s (run %s): poll failed", batch.pk, batch.run_id)
    failures = batch.poll_failures + 1
    ProviderBatch.objects.filter(pk=batch.pk).update(
        poll_failures=failures, error=f"last poll failed: {reason}"[:500]
    )
    # A provider's refusal is final; anything else (an outage, a key the operator removed, a
    # bug) may pass: tried again, up to MAX_POLL_FAILURES times in a row.
    final = isinstance(error, CallFailed) and not error.retryable
    if not final and failures < MAX_POLL_FAILURES:
        return None
    ProviderBatch.objects.filter(pk=batch.pk).update(
        status=ProviderBatch.Status.FAILED, error=f"given up: {reason}"[:500]
    )
    _store_answers(batch, {}, f"the provider's batch could not be read ({reason})")
    return _close_if_complete(batch)


def _close_if_complete(batch: ProviderBatch) -> JudgeRun | None:
    """Close the batch's chunk when none of its parts is open or still being sent."""
    open_parts = ProviderBatch.objects.filter(
        chunk=batch.chunk_id,
        status__in=[ProviderBatch.Status.SUBMITTING, ProviderBatch.Status.IN_PROGRESS],
    )
    if (
        open_parts.exists()
        or JudgeRunChunk.objects.filter(pk=batch.chunk_id, submitting=True).exists()
    ):
        return None
    return chunk_close(batch.chunk)


def batch_poll(batch: ProviderBatch) -> JudgeRun | None:
    """One look at a batch; when it has ended, its answers are stored and the batch is
    collected. The run when that finished it."""
    judge = batch.run.judge
    current = asyncio.run(_with_session(state, judge, batch.provider_id))
    ProviderBatch.objects.filter(pk=batch.pk).update(  # polled_at: set by batches_poll
        provider_status=current.provider_status, error="", poll_failures=0
    )
    if not current.ended:
        if batch.run.status == JudgeRun.Status.CANCELLED:
            _ask_to_cancel(batch, current.provider_status)
        return None
    wanted = set(batch.requests)
    answers = asyncio.run(_with_session(results, judge, batch.provider_id, current, wanted))
    _store_answers(batch, answers, f"no answer in the provider's batch ({current.provider_status})")
    collected = ProviderBatch.objects.filter(
        pk=batch.pk, status=ProviderBatch.Status.IN_PROGRESS
    ).update(status=ProviderBatch.Status.COLLECTED, collected_at=timezone.now())
    return _close_if_complete(batch) if collected else None


def _ask_to_cancel(batch: ProviderBatch, provider_status: str) -> None:
    """The lead cancelled the run: the provider stops what it has not done (what it did is
    still collected, it is paid for). Asked at every poll until the provider says so."""
    if provider_status not in ("cancelling", "canceling"):
        _cancel_at_provider(batch.run.judge, batch.provider_id)


def _cancel_at_provider(judge: Judge, provider_id: str) -> None:
    try:
        asyncio.run(_with_session(cancel, judge, provider_id))
    except CallFailed as failure:
        log.warning(
            "batch %s: the provider did not take the cancellation: %s", provider_id, failure
        )


def _store_answers(batch: ProviderBatch, answers: dict, missing: str) -> None:
    """Each trial of the batch as a verdict, from the provider's answers (custom id -> Reply
    or error text); a request without an answer fails with `missing`."""
    run = batch.run
    tasks = dict(
        Pair.objects.filter(
            pk__in={trial_of(request_id).pair_id for request_id in batch.requests}
        ).values_list("pk", "task_id")
    )
    templates = PromptTemplate.objects.in_bulk(set(batch.templates.values()))
    waited = (timezone.now() - (batch.submitted_at or batch.created_at)).total_seconds()
    trials: dict[Trial, list[str]] = {}
    for request_id in batch.requests:
        trials.setdefault(trial_of(request_id), []).append(request_id)
    rows, replies = [], []
    for trial, ids in trials.items():
        if trial.pair_id not in tasks:
            continue  # the pair was deleted meanwhile
        template = templates[batch.templates[str(tasks[trial.pair_id])]]
        outcomes = []
        for request_id in sorted(ids):  # A before B
            answer = answers.get(request_id, missing)
            if isinstance(answer, Reply):
                outcomes.append(Outcome(answer, "", 1))
                replies.append((batch.requests[request_id][0], answer))
            else:
                outcomes.append(Outcome(None, answer, 1))
        verdict = trial_verdict(run, template, trial, outcomes, waited)
        verdict.images_adapted = batch.requests[ids[0]][1]
        rows.append(verdict)
    verdicts_store(batch.chunk, rows, replies)
