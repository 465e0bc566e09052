"""Judge runs: start, execute a chunk, finish, cancel, resume.

A run covers a selection of pairs in both orders (pointwise: each response alone) with K
samples each; it is split into chunks,
each a Celery task enqueued on commit. Chunk size keeps a chunk well inside the Celery time
limit at the judge's requests-per-minute budget.
"""

import logging

from django.conf import settings
from django.db import transaction
from django.db.models import Count
from django.utils.translation import gettext

from content.models import Pair
from core.outbox import enqueue_on_commit
from judging.backends import ConfigurationError, check_callable
from judging.errors import RunCannotStart, RunRefused
from judging.models import API_BACKENDS, MAX_SAMPLES, Judge, JudgeRun, JudgeRunChunk
from judging.prompts import TemplateInvalid, is_pointwise, run_template_stored
from judging.runner import chunk_execute, trial_orders
from judging.services.batches import batch_chunk_submit
from judging.services.run_finish import chunk_close
from projects.models import Project, Task

log = logging.getLogger(__name__)

MAX_CHUNK_PAIRS = 1000
SLOW_CALL_SECONDS = 20


def chunk_pair_count(judge: Judge, samples: int) -> int:
    """Pairs per chunk: at most MAX_CHUNK_PAIRS, and few enough that the chunk's calls fit in
    half the task time limit at the judge's rpm budget."""
    if judge.backend in (Judge.Backend.ALWAYS_A, Judge.Backend.RANDOM):
        return MAX_CHUNK_PAIRS
    # Without a cap, the pace is what the API takes: planned as one call per slot every
    # SLOW_CALL_SECONDS, which a slow API (long reasoning answers) still keeps.
    rpm = judge.requests_per_minute or judge.concurrency * 60 / SLOW_CALL_SECONDS
    budget_calls = rpm * settings.CELERY_TASK_TIME_LIMIT / 60 / 2
    return max(1, min(MAX_CHUNK_PAIRS, int(budget_calls // (2 * samples))))


def judge_run_start(
    judge: Judge,
    project: Project,
    *,
    task: Task | None = None,
    samples: int = 1,
    pair_ids: list[int] | None = None,
    purpose: str = JudgeRun.Purpose.EVALUATE,
    user=None,
    background: bool = False,
    mode: str = JudgeRun.Mode.LIVE,
) -> JudgeRun:
    """Create the run and its chunks and enqueue them. `pair_ids` narrows the selection
    (default: every pair of the project, or of the task). `background` asks the embedded mode
    (no Celery worker) to run the chunks in a thread instead of inside this call. `mode`
    "batch" submits the calls to the provider's batch API (judging/services/batches.py)."""
    if not 1 <= samples <= MAX_SAMPLES:
        raise RunCannotStart(f"samples must be between 1 and {MAX_SAMPLES}")
    if mode not in JudgeRun.Mode.values:
        raise RunCannotStart(f"unknown run mode {mode!r}")
    if mode == JudgeRun.Mode.BATCH and judge.backend not in API_BACKENDS:
        raise RunCannotStart("only an OpenAI or Anthropic judge can run as a provider batch")
    try:
        check_callable(judge, project)
    except ConfigurationError as error:
        raise RunCannotStart(str(error)) from None
    pairs = Pair.objects.filter(project=project)
    if task is not None:
        pairs = pairs.filter(task=task)
    if pair_ids is not None:
        pairs = pairs.filter(pk__in=pair_ids)
    ids = list(pairs.order_by("id").values_list("id", flat=True))
    if not ids:
        raise RunCannotStart("no pairs to judge in this selection")
    orders, scales = _run_shape(judge, project, pairs)
    # A batch chunk is only submitted: no time limit to fit in.
    size = MAX_CHUNK_PAIRS if mode == JudgeRun.Mode.BATCH else chunk_pair_count(judge, samples)
    with transaction.atomic():
        run = JudgeRun.objects.create(
            judge=judge,
            project=project,
            task=task,
            samples=samples,
            purpose=purpose,
            mode=mode,
            pointwise_scale=",".join(scales),
            trials=sum(n * len(orders[task_id]) for task_id, n in _pairs_per_task(pairs)) * samples,
            created_by=user,
        )
        chunks = JudgeRunChunk.objects.bulk_create(
            JudgeRunChunk(run=run, index=number, pair_ids=ids[start : start + size])
            for number, start in enumerate(range(0, len(ids), size))
        )
        _enqueue([chunk.pk for chunk in chunks], background, run)
    return run


def _pairs_per_task(pairs) -> list[tuple[int, int]]:
    return list(pairs.values_list("task_id").annotate(n=Count("id")).order_by())


def _run_shape(judge: Judge, project: Project, pairs) -> tuple[dict, list[str]]:
    """The orders each task's pairs are judged in and the pointwise scales used, from the
    templates the judge uses for the tasks' kinds (a missing template refuses the run now
    rather than failing every chunk)."""
    orders, scales = {}, set()
    tasks = Task.objects.filter(pk__in=pairs.values("task_id"))
    for task in tasks:
        try:
            template = run_template_stored(judge, task.kind, project)
        except TemplateInvalid as error:
            raise RunCannotStart(str(error)) from None
        orders[task.pk] = trial_orders(template)
        if is_pointwise(template.answer_format):
            if judge.backend == Judge.Backend.ALWAYS_A:
                raise RunCannotStart(
                    f"always-a is a pairwise baseline; template {template.name!r} scores "
                    "each response alone"
                )
            scales.add(template.answer_format)
    return orders, sorted(scales)


def _enqueue(chunk_ids: list[int], background: bool, run: JudgeRun) -> None:
    from judging.tasks import judge_chunk

    # A batch run's chunks are only submitted: the scheduled poll (judge-batches-poll in
    # settings.ARBITER_SCHEDULED_JOBS) collects their answers, in either mode.
    enqueue_on_commit(judge_chunk, JudgeRunChunk, chunk_ids, background=background)


def judge_chunk_run(chunk_id: int) -> JudgeRun | None:
    """Execute a chunk (idempotent: a repeated delivery does only what is missing), then
    finish the run when it was the last one: the run is returned to the caller that
    finished it, None otherwise."""
    chunk = (
        JudgeRunChunk.objects.select_related("run__judge__connection", "run__project")
        .filter(pk=chunk_id)
        .first()
    )
    if chunk is None or chunk.done:
        return None
    if chunk.run.status in (JudgeRun.Status.CANCELLED, JudgeRun.Status.FINISHED):
        return None
    try:
        # Checked again at every chunk: the operator may have withdrawn the connection
        # from the project (or its key) since the run started.
        check_callable(chunk.run.judge, chunk.run.project)
    except ConfigurationError as error:
        log.warning("run %s stopped: %s", chunk.run_id, error)
        JudgeRun.objects.filter(
            pk=chunk.run_id, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
        ).update(status=JudgeRun.Status.CANCELLED)
        return None
    if chunk.run.mode == JudgeRun.Mode.BATCH:
        # Submitted now, answered later: the poll (batches_poll) closes the chunk.
        return chunk_close(chunk) if batch_chunk_submit(chunk) else None
    if not chunk_execute(chunk):
        return None  # cancelled: the chunk stays open for a resume
    return chunk_close(chunk)


def judge_run_cancel(run: JudgeRun) -> JudgeRun:
    """Stop a run: chunks stop starting calls at their next flush; answers so far stay."""
    updated = JudgeRun.objects.filter(
        pk=run.pk, status__in=[JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
    ).update(status=JudgeRun.Status.CANCELLED)
    if not updated:
        raise RunRefused(
            gettext("run %(run)s is %(status)s; only a pending or running run stops")
            % {"run": run.pk, "status": run.status}
        )
    run.refresh_from_db()
    return run


def judge_run_resume(run: JudgeRun, *, background: bool = False) -> JudgeRun:
    """Continue a cancelled run, or retry the failed calls of a finished one: every chunk
    with a missing trial is enqueued again and calls only for what is missing."""
    run.refresh_from_db()
    if run.purpose == JudgeRun.Purpose.IMPORT:
        raise RunRefused(gettext("imported predictions cannot be resumed; import the file again"))
    if run.status in (JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING):
        raise RunRefused(
            gettext("run %(run)s is already %(status)s") % {"run": run.pk, "status": run.status}
        )
    try:
        check_callable(run.judge, run.project)
    except ConfigurationError as error:
        raise RunRefused(str(error)) from None
    with transaction.atomic():
        chunks = list(JudgeRunChunk.objects.select_for_update().filter(run=run))
        reopen = [c.pk for c in chunks if not c.done or c.failed]
        if not reopen:
            raise RunRefused(gettext("run %(run)s has nothing missing") % {"run": run.pk})
        JudgeRunChunk.objects.filter(pk__in=reopen).update(done=False, finished_at=None)
        JudgeRun.objects.filter(pk=run.pk).update(status=JudgeRun.Status.RUNNING, finished_at=None)
        _enqueue(reopen, background, run)
    run.refresh_from_db()
    return run
