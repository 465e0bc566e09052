"""Executing one chunk of a judge run: every missing trial (pair × order × sample) of the
chunk's pairs, concurrently with asyncio, within the judge's limits. A pointwise template's
trial is (pair × sample) and makes two requests, one per response, each scored alone.

Answers are written in small batches while the chunk runs (so a killed worker loses at most
the calls in flight), as upserts on (judge, pair, order, sample): a chunk delivered twice, a
resumed run or a rerun never duplicates a verdict. Trials whose call failed for good are
stored with their error and are called again by the next resume or rerun.
"""

import asyncio
import contextlib
import logging
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, InterfaceError, OperationalError, connection
from django.db.models import F
from django.utils import timezone

from content.models import Pair
from core.outbound import JUDGE_CALL_RETRIES, client_session
from judging.backends import call_backend
from judging.contents import UNSENDABLE, PairContents, Trial
from judging.models import (
    API_BACKENDS,
    POINTWISE_SCALES,
    Judge,
    JudgeRun,
    JudgeRunChunk,
    PromptTemplate,
    Verdict,
)
from judging.parsing import parse_answer, parse_score, side_from_scores
from judging.prompts import (
    is_pointwise,
    run_template_stored,
)
from judging.rate_limits import limits_for
from judging.response_cache import cached_replies, replies_store, request_identity, request_key
from judging.retry import Outcome, call_with_retries
from judging.selectors import verdict_tally
from projects.scale import canonical_side

log = logging.getLogger(__name__)

ORDERS = (Verdict.Order.FORWARD, Verdict.Order.REVERSE)
_FLUSH_SECONDS = 0.5
_FLUSH_ROWS = 200
# Pauses between the tries of a flush that lost the database: about half a minute in all,
# what a PostgreSQL restart takes.
FLUSH_RETRY_PAUSES = (0.5, 1, 2, 4, 8, 15)
_BASELINES = (Judge.Backend.ALWAYS_A, Judge.Backend.RANDOM)
RETRY_POLICY = JUDGE_CALL_RETRIES  # declared with every retry in core/outbound.py
_FIRST_SLICE_PAIRS = 32  # enough calls to fill a judge's first window while the rest is planned
_SLICE_PAIRS = 250


def trial_orders(template: PromptTemplate) -> tuple[str, ...]:
    """The orders a pair is judged in with this template: both, or none for a pointwise one."""
    return (Verdict.Order.POINTWISE,) if is_pointwise(template.answer_format) else ORDERS


def missing_trials(judge: Judge, pair_orders: dict[int, tuple], samples: int) -> list[Trial]:
    """Trials without an answer: never made, or made and failed. `pair_orders`: each pair's
    orders (trial_orders of its task's template)."""
    answered = set(
        Verdict.objects.filter(
            judge=judge, pair_id__in=list(pair_orders), sample__lt=samples, choice__isnull=False
        ).values_list("pair_id", "order", "sample")
    )
    return [
        Trial(pair_id, order, sample)
        for pair_id, orders in pair_orders.items()
        for order in orders
        for sample in range(samples)
        if (pair_id, order, sample) not in answered
    ]


def chunk_tally(chunk: JudgeRunChunk) -> dict:
    """The chunk's verdict counts, from the verdicts themselves."""
    run = chunk.run
    return verdict_tally(
        Verdict.objects.filter(
            judge_id=run.judge_id, pair_id__in=chunk.pair_ids, sample__lt=run.samples
        )
    )


def verdicts_store(chunk: JudgeRunChunk, rows: list[Verdict], replies: list, **chunk_fields):
    """Upsert the chunk's new verdicts, keep the new answers for the response cache, and
    refresh the chunk's tallies (with any other fields of the chunk given)."""
    replies_store(replies)
    answered = [row for row in rows if row.choice is not None]
    failed = [row for row in rows if row.choice is None]
    unique = ["judge", "pair", "order", "sample"]
    fields = ["choice", "score_a", "score_b", "error", "raw_output", "run", "template"]
    fields += ["latency_ms", "images_adapted", "from_cache"]
    fields += ["input_tokens", "output_tokens", "created_at"]
    Verdict.objects.bulk_create(
        answered, update_conflicts=True, unique_fields=unique, update_fields=fields
    )
    # A failure never replaces an answer (another delivery of this chunk may have stored
    # one); an earlier failure of the same trial stays as it was.
    Verdict.objects.bulk_create(failed, ignore_conflicts=True)
    JudgeRunChunk.objects.filter(pk=chunk.pk).update(
        **chunk_tally(chunk), verdicts_stored_at=timezone.now(), **chunk_fields
    )


class _VerdictWriter:
    """Writes batches from one dedicated thread (Django connections are per thread)."""

    def __init__(self, chunk: JudgeRunChunk):
        self.chunk = chunk
        self.executor = ThreadPoolExecutor(max_workers=1, thread_name_prefix="verdicts")

    def _write(self, rows: list[Verdict], replies: list, window_changes: list) -> bool:
        # A database restart or a dropped connection costs a retry of the flush (an upsert:
        # repeating it writes nothing twice), not the chunk and its paid-for answers.
        for pause in (*FLUSH_RETRY_PAUSES, None):
            try:
                verdicts_store(self.chunk, rows, replies, concurrency_log=window_changes)
                return JudgeRun.objects.filter(
                    pk=self.chunk.run_id, status=JudgeRun.Status.CANCELLED
                ).exists()
            except (OperationalError, InterfaceError) as error:
                if pause is None:
                    raise
                log.warning(
                    "chunk %s: flush failed (%s); again in %s s", self.chunk.pk, error, pause
                )
                with contextlib.suppress(DatabaseError):
                    connection.close()  # the next try opens a fresh one
                time.sleep(pause)
        raise AssertionError("unreachable")

    async def write(self, rows: list[Verdict], replies: list, window_changes: list) -> bool:
        """Store the rows, the new answers for the response cache and the concurrency's
        changes so far; True when the run has been cancelled meanwhile."""
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.executor, self._write, rows, replies, window_changes)

    def close(self):
        # Resolved inside the writer thread: its own connection, not the caller's.
        self.executor.submit(lambda: connection.close()).result()
        self.executor.shutdown()


def trial_verdict(run: JudgeRun, template, trial: Trial, outcomes: list, seconds: float) -> Verdict:
    """The verdict of a trial from its calls' outcomes (one, or one per response)."""
    if trial.order == Verdict.Order.POINTWISE:
        return _pointwise_verdict(run, template, trial, outcomes, seconds)
    row = _verdict_row(run, template, trial, seconds)
    (outcome,) = outcomes
    if outcome.reply is None:
        row.error = outcome.error[:2000] or "failed"
        return row
    row.raw_output = outcome.reply.text
    row.input_tokens = outcome.reply.input_tokens
    row.output_tokens = outcome.reply.output_tokens
    choice = parse_answer(outcome.reply.text, template.answer_format)
    # In the reverse order B was shown first: back to canonical.
    row.choice = canonical_side(choice, trial.order == Verdict.Order.REVERSE)
    return row


def cached_verdict(run: JudgeRun, template, trial: Trial, replies: list) -> Verdict:
    """The verdict of a trial answered by the response cache (paid before: no call)."""
    verdict = trial_verdict(run, template, trial, [Outcome(reply, "", 0) for reply in replies], 0)
    verdict.from_cache = True
    return verdict


def unsent_verdict(run: JudgeRun, template, trial: Trial, error: str) -> Verdict:
    """The failure of a trial none of whose requests went out (a resume sends it again)."""
    requests = 2 if trial.order == Verdict.Order.POINTWISE else 1
    return trial_verdict(run, template, trial, [Outcome(None, error, 0)] * requests, 0)


def _pointwise_verdict(run, template, trial: Trial, outcomes: list, seconds: float) -> Verdict:
    row = _verdict_row(run, template, trial, seconds)
    failed = [
        f"response {side}: {outcome.error[:900] or 'failed'}"
        for side, outcome in zip("AB", outcomes, strict=True)
        if outcome.reply is None
    ]
    if failed:  # both scores or none: a retry asks for both again
        row.error = "; ".join(failed)
        return row
    replies = [outcome.reply for outcome in outcomes]
    row.raw_output = "\n\n".join(
        f"[response {s}]\n{r.text}" for s, r in zip("AB", replies, strict=True)
    )
    row.input_tokens = _total(r.input_tokens for r in replies)
    row.output_tokens = _total(r.output_tokens for r in replies)
    row.score_a, row.score_b = (
        parse_score(r.text, *POINTWISE_SCALES[template.answer_format]) for r in replies
    )
    row.choice = side_from_scores(row.score_a, row.score_b)
    return row


def _total(values) -> int | None:
    known = [value for value in values if value is not None]
    return sum(known) if known else None


def _verdict_row(run: JudgeRun, template, trial: Trial, seconds: float) -> Verdict:
    return Verdict(
        judge_id=run.judge_id,
        pair_id=trial.pair_id,
        run=run,
        order=trial.order,
        sample=trial.sample,
        template=template,
        latency_ms=int(seconds * 1000),
        created_at=timezone.now(),
    )


@dataclass
class RequestCache:
    """The response cache as a chunk uses it: each trial's request keys, the answers already
    stored for them (read once, before any call), and the new answers waiting to be stored."""

    keys: dict  # Trial -> [request key, ...]
    found: dict  # request key -> Reply
    new: list = field(default_factory=list)  # (request key, Reply)

    def replies(self, trial: Trial) -> list | None:
        keys = self.keys.get(trial)
        if keys and all(key in self.found for key in keys):
            return [self.found[key] for key in keys]
        return None


def response_cache(run: JudgeRun, trials, contents, templates) -> RequestCache | None:
    if run.judge.backend not in API_BACKENDS:
        return None  # baselines cost nothing
    keys = {}
    for trial in trials:
        template = templates[contents.pairs[trial.pair_id].task_id]
        identity = request_identity(run.judge, template, trial.order, trial.sample)
        keys[trial] = [
            request_key(identity, content) for content in contents.request_contents(template, trial)
        ]
    return RequestCache(keys, cached_replies(key for ks in keys.values() for key in ks))


@dataclass
class _Slice:
    """Part of a chunk's pairs, planned on its own (chunk_slices): its missing trials, the
    templates of its tasks, its contents and its response cache."""

    trials: list[Trial]
    templates: dict
    contents: PairContents
    cache: RequestCache | None


async def _execute(run, first: _Slice, rest: Iterator[_Slice], writer) -> bool:
    """Run the trials of the first slice at once, and of the others as the planner thread
    delivers them; returns False when stopped by a cancellation."""
    judge = run.judge
    limits = limits_for(judge, settings.REDIS_URL)
    # Trials in a call (or a retry wait): an eighth more than the judge's slots, so that when
    # the window is full a trial already waits for the next free slot and a finishing call
    # hands its slot over to it in the same round trip to Redis (rate_limits.py) instead of
    # releasing it for a fresh acquire a moment later: one round trip per call, not two.
    # (A judge of under 8 slots keeps one trial per slot: its retries stay in order.)
    calling = asyncio.Semaphore(judge.concurrency + judge.concurrency // 8)
    prepared = asyncio.Semaphore(2 * judge.concurrency + 16)  # messages held in memory
    pending: list[Verdict] = []
    cancelled = asyncio.Event()
    # aiohttp rather than httpx: a quarter of the CPU per request, which is what bounds a
    # worker at hundreds of calls per second. The total timeout bounds a whole attempt.
    session = client_session(total_seconds=judge.timeout_seconds, limit=judge.concurrency)
    caches: list[RequestCache] = []
    planner = ThreadPoolExecutor(max_workers=1, thread_name_prefix="plan")
    try:

        async def run_trial(trial: Trial, part: _Slice):
            contents, templates, cache = part.contents, part.templates, part.cache
            # Messages are built ahead (bounded, they hold images) so that a call slot is
            # never held while a file is read.
            async with prepared:
                if cancelled.is_set():
                    return
                template = templates[contents.pairs[trial.pair_id].task_id]
                trial_key = f"{trial.pair_id}:{trial.order}:{trial.sample}"
                if cache is not None and (replies := cache.replies(trial)) is not None:
                    pending.append(cached_verdict(run, template, trial, replies))
                    return
                try:
                    messages, adapted = await asyncio.to_thread(contents.messages, template, trial)
                except UNSENDABLE as error:
                    error_text = f"cannot send the pair's content: {error}"
                    pending.append(unsent_verdict(run, template, trial, error_text))
                    return

                async def call(message, key):
                    async def attempt():
                        if judge.backend in _BASELINES:
                            return await call_backend(
                                None, judge, message, trial.sample, key, template.answer_format
                            )
                        async with limits.slot():
                            return await call_backend(session, judge, message, trial.sample, key)

                    try:
                        return await call_with_retries(attempt, RETRY_POLICY)
                    except Exception as error:  # a bug or a bad file must not sink the chunk
                        log.exception("trial %s failed", key)
                        return Outcome(None, f"internal error: {error!r}", 1)

                # A pointwise trial's two requests (one per response) go out together.
                keys = [trial_key] if len(messages) == 1 else [f"{trial_key}:A", f"{trial_key}:B"]
                async with calling:
                    if cancelled.is_set():
                        return
                    started = time.perf_counter()
                    outcomes = await asyncio.gather(*map(call, messages, keys))
                seconds = time.perf_counter() - started
                verdict = trial_verdict(run, template, trial, outcomes, seconds)
                verdict.images_adapted = adapted
                pending.append(verdict)
                if cache is not None:
                    cache.new += [
                        (key, outcome.reply)
                        for key, outcome in zip(cache.keys[trial], outcomes, strict=True)
                        if outcome.reply is not None
                    ]

        async def flush_periodically():
            while True:
                await asyncio.sleep(_FLUSH_SECONDS)
                await flush()

        async def flush():
            batch = pending[:]
            del pending[: len(batch)]
            replies = []
            for cache in caches:
                replies += cache.new
                del cache.new[:]
            if await writer.write(batch, replies, list(limits.changes)):
                cancelled.set()

        calls: list[asyncio.Task] = []

        def start(part: _Slice):
            if part.cache is not None:
                caches.append(part.cache)
            calls.extend(asyncio.create_task(run_trial(trial, part)) for trial in part.trials)

        flusher = asyncio.create_task(flush_periodically())
        try:
            start(first)
            # The rest is planned (database reads, request keys) while the first calls run:
            # a chunk's first call no longer waits for the whole chunk's plan.
            loop = asyncio.get_running_loop()
            while not cancelled.is_set():
                part = await loop.run_in_executor(planner, next, rest, None)
                if part is None:
                    break
                start(part)
            await asyncio.gather(*calls)
        finally:
            flusher.cancel()
            await flush()
    finally:
        # The planner's connection is closed inside its thread: its own, not the caller's.
        planner.submit(lambda: connection.close()).result()
        planner.shutdown()
        await limits.close()
        await session.close()
    return not cancelled.is_set()


def chunk_plan(
    chunk: JudgeRunChunk, pair_ids: list[int] | None = None
) -> tuple[list[Pair], dict, list[Trial]]:
    """The chunk's pairs (or those of `pair_ids` among them), the template of each of their
    tasks, and the trials still missing."""
    run = chunk.run
    pairs = list(
        Pair.objects.filter(pk__in=chunk.pair_ids if pair_ids is None else pair_ids).select_related(
            "prompt", "response_a", "response_b", "task"
        )
    )
    tasks = {pair.task_id: pair.task for pair in pairs}
    templates = {
        task_id: run_template_stored(run.judge, task.kind, run.project)
        for task_id, task in tasks.items()
    }
    pair_orders = {pair.pk: trial_orders(templates[pair.task_id]) for pair in pairs}
    return pairs, templates, missing_trials(run.judge, pair_orders, run.samples)


def chunk_slices(chunk: JudgeRunChunk) -> Iterator[_Slice]:
    """The chunk planned in slices that have missing trials: a small first one, then larger
    ones. Planning 1,000 pairs (their content, the missing trials, the response cache's keys
    and lookups) takes 0.2-0.5 s, during which a chunk planned whole sent nothing: with a
    chunk every few seconds that was 5-10 % of a worker's time lost at the provider."""
    run = chunk.run
    ids, start, size = list(chunk.pair_ids), 0, _FIRST_SLICE_PAIRS
    while start < len(ids):
        pairs, templates, trials = chunk_plan(chunk, ids[start : start + size])
        start, size = start + size, _SLICE_PAIRS
        if trials:
            contents = PairContents(pairs, trials, run.judge.backend)
            cache = response_cache(run, trials, contents, templates)
            yield _Slice(trials, templates, contents, cache)


def chunk_execute(chunk: JudgeRunChunk) -> bool:
    """Call for the chunk's missing trials; True when every trial now has a verdict (an
    answer or a final error), False when a cancellation stopped it."""
    run = chunk.run
    run.judge.connection  # noqa: B018 -- loaded now: the calls below run in an event loop
    JudgeRunChunk.objects.filter(pk=chunk.pk).update(attempts=F("attempts") + 1)
    JudgeRun.objects.filter(pk=run.pk, status=JudgeRun.Status.PENDING).update(
        status=JudgeRun.Status.RUNNING, started_at=timezone.now()
    )
    slices = chunk_slices(chunk)
    first = next(slices, None)
    completed = True
    if first is not None:
        writer = _VerdictWriter(chunk)
        try:
            completed = asyncio.run(_execute(run, first, slices, writer))
        finally:
            writer.close()
    else:
        JudgeRunChunk.objects.filter(pk=chunk.pk).update(**chunk_tally(chunk))
    log.info("run %s chunk %s: completed=%s", run.pk, chunk.index, completed)
    return completed
