"""Reads of the judging app: run progress, run lists, judges (whose judges a lead may see
and use: annotation/access.py)."""

from dataclasses import dataclass
from datetime import timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, TypedDict

from django.core.exceptions import PermissionDenied
from django.db.models import Count, F, Q, QuerySet, Sum
from django.utils import timezone

from judging.models import (
    BATCH_PRICE_FACTOR,
    Connection,
    Judge,
    JudgeRun,
    JudgeRunChunk,
    PromptTemplate,
    ProviderBatch,
    Verdict,
)
from judging.prompts import BUILT_IN
from projects.access import (
    is_lead_anywhere,
    led_or_operator_wide,
    operator_wide,
    project_or_operator_wide,
)

if TYPE_CHECKING:  # django-stubs-ext is a development dependency
    from django_stubs_ext import WithAnnotations

RATE_WINDOW_SECONDS = 60


@dataclass(frozen=True)
class RunProgress:
    run: JudgeRun
    trials: int
    answered: int  # naming a side
    ties: int
    invalid: int
    failed: int
    cached: int  # answers from the response cache: no call, no cost
    rate_per_second: float  # verdicts of this run over the last minute
    input_tokens: int
    output_tokens: int
    chunks: int
    chunks_done: int
    waiting: int = 0  # chunks whose message the broker never got (core/outbox.py)

    @property
    def done(self) -> int:
        return self.answered + self.ties + self.invalid

    @property
    def remaining(self) -> int:
        return max(self.trials - self.done - self.failed, 0)

    @property
    def percent(self) -> int:
        return round(100 * (self.done + self.failed) / self.trials) if self.trials else 100

    @property
    def eta_seconds(self) -> float | None:
        if self.run.status != JudgeRun.Status.RUNNING or not self.rate_per_second:
            return None
        return self.remaining / self.rate_per_second

    @property
    def list_price(self) -> Decimal:
        """What the tokens paid for cost at the judge's live prices."""
        judge = self.run.judge
        return (
            judge.price_input_per_mtok * self.input_tokens
            + judge.price_output_per_mtok * self.output_tokens
        ) / Decimal(1_000_000)

    @property
    def cost(self) -> Decimal:
        if self.run.mode == JudgeRun.Mode.BATCH:
            return self.list_price * Decimal(str(BATCH_PRICE_FACTOR))
        return self.list_price

    @property
    def saved(self) -> Decimal:
        """What the provider's batch discount saved against live calls."""
        return self.list_price - self.cost

    def as_dict(self) -> dict:
        return {
            "run": self.run.pk,
            "judge": self.run.judge.name,
            "status": self.run.status,
            "trials": self.trials,
            "done": self.done,
            "answered": self.answered,
            "ties": self.ties,
            "invalid": self.invalid,
            "failed": self.failed,
            "cached": self.cached,
            "remaining": self.remaining,
            "rate_per_second": round(self.rate_per_second, 2),
            "eta_seconds": None if self.eta_seconds is None else round(self.eta_seconds, 1),
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": float(round(self.cost, 4)),
            "mode": self.run.mode,
            "cost_saved": float(round(self.saved, 4)),
        }


def run_progress(run: JudgeRun) -> RunProgress:
    """Counts from the chunk tallies (kept by the runner) and the recent verdict rate: two
    queries whatever the size of the run."""
    if run.purpose == JudgeRun.Purpose.IMPORT:
        return _imported_progress(run)
    totals = JudgeRunChunk.objects.filter(run=run).aggregate(
        answered=Sum("answered", default=0),
        ties=Sum("ties", default=0),
        invalid=Sum("invalid", default=0),
        failed=Sum("failed", default=0),
        cached=Sum("cached", default=0),
        input_tokens=Sum("input_tokens", default=0),
        output_tokens=Sum("output_tokens", default=0),
        chunks=Count("id"),
        chunks_done=Count("id", filter=Q(done=True)),
        waiting=Count("id", filter=Q(done=False, enqueued_at__isnull=True)),
    )
    since = timezone.now() - timedelta(seconds=RATE_WINDOW_SECONDS)
    recent = Verdict.objects.filter(run=run, created_at__gte=since).count()
    window: float = RATE_WINDOW_SECONDS
    if run.started_at and run.started_at > since:
        window = max((timezone.now() - run.started_at).total_seconds(), 1.0)
    return RunProgress(run=run, trials=run.trials, rate_per_second=recent / window, **totals)


_COUNTS = ("answered", "ties", "invalid", "failed", "cached")


def _tally() -> dict:
    """Aggregates of a set of verdicts: answers naming a side, ties, invalid answers,
    failures, answers from the response cache, and the tokens paid for."""
    return {
        "answered": Count("id", filter=Q(choice__in=["A", "B"])),
        "ties": Count("id", filter=Q(choice="tie")),
        "invalid": Count("id", filter=Q(choice="invalid")),
        "failed": Count("id", filter=Q(choice__isnull=True)),
        "cached": Count("id", filter=Q(from_cache=True)),
        # Tokens paid for: an answer from the response cache cost nothing this time.
        "input_tokens": Sum("input_tokens", filter=Q(from_cache=False), default=0),
        "output_tokens": Sum("output_tokens", filter=Q(from_cache=False), default=0),
    }


def verdict_tally(verdicts: QuerySet[Verdict]) -> dict:
    return verdicts.aggregate(**_tally())


def _imported_progress(run: JudgeRun) -> RunProgress:
    """An imported prediction file has no chunks: count its verdicts."""
    totals = verdict_tally(Verdict.objects.filter(run=run))
    return RunProgress(
        run=run, trials=run.trials, rate_per_second=0.0, chunks=0, chunks_done=0, **totals
    )


def run_batches(run: JudgeRun) -> list[ProviderBatch]:
    """The run's provider batches, with their request counts (no request bodies are kept)."""
    return list(ProviderBatch.objects.filter(run=run).select_related("chunk").defer("requests"))


CHART_WIDTH, CHART_HEIGHT = 300, 60


def run_concurrency_chart(run: JudgeRun) -> dict | None:
    """The judge's adaptive concurrency during the run, from its chunks' logs, as the points
    of a small line chart (None before there are two changes to draw)."""
    points = sorted(
        (float(at), int(slots))
        for log in JudgeRunChunk.objects.filter(run=run).values_list("concurrency_log", flat=True)
        for at, slots in (entry for entry in log or [] if _is_change(entry))
    )
    if len(points) < 2:
        return None
    start, end = points[0][0], points[-1][0]
    top = max(slots for _at, slots in points)
    span = max(end - start, 1e-9)
    coordinates = " ".join(
        f"{CHART_WIDTH * (at - start) / span:.1f},{CHART_HEIGHT * (1 - slots / top):.1f}"
        for at, slots in points
    )
    return {
        "points": coordinates,
        "top": top,
        "last": points[-1][1],
        "changes": len(points),
        "seconds": round(end - start, 1),
        "width": CHART_WIDTH,
        "height": CHART_HEIGHT,
    }


def _is_change(entry) -> bool:
    return (
        isinstance(entry, list | tuple)
        and len(entry) == 2
        and all(isinstance(v, int | float) and not isinstance(v, bool) for v in entry)
    )


def run_pair_ids(run: JudgeRun) -> list[int]:
    """The pairs a run covers (its chunks' selection)."""
    return [pair_id for chunk in run.chunks.all() for pair_id in chunk.pair_ids]


class RunTallies(TypedDict):
    answered: int
    ties: int
    invalid: int
    failed: int
    cached: int
    done: int  # answered + ties + invalid


def runs_with_tallies(project, limit: int = 50) -> "list[WithAnnotations[JudgeRun, RunTallies]]":
    """The project's latest runs, each with answered / ties / invalid / failed / done: summed
    from the chunk tallies, or counted from the verdicts of an imported file (which has no
    chunks). Two queries whatever the number of runs."""
    runs: list[WithAnnotations[JudgeRun, RunTallies]] = list(
        JudgeRun.objects.filter(project=project)
        .select_related("judge", "task")
        .annotate(
            answered=Sum("chunks__answered", default=0),
            ties=Sum("chunks__ties", default=0),
            invalid=Sum("chunks__invalid", default=0),
            failed=Sum("chunks__failed", default=0),
            cached=Sum("chunks__cached", default=0),
        )
        .annotate(done=F("answered") + F("ties") + F("invalid"))
        .order_by("-created_at", "-id")[:limit]
    )
    imported = [run.pk for run in runs if run.purpose == JudgeRun.Purpose.IMPORT]
    if imported:
        rows = Verdict.objects.filter(run__in=imported).values("run").annotate(**_tally())
        by_run = {row["run"]: row for row in rows}
        for run in runs:
            if run.pk in by_run:
                for key in _COUNTS:
                    setattr(run, key, by_run[run.pk][key])
                run.done = run.answered + run.ties + run.invalid
    return runs


def callable_judges(project) -> QuerySet[Judge]:
    return judges_of_project(project).exclude(backend=Judge.Backend.EXTERNAL)


def connections_for(project) -> QuerySet[Connection]:
    """The operator's connections a project's judges may call through."""
    return Connection.objects.filter(Q(all_projects=True) | Q(projects=project)).distinct()


def connection_allows(connection: Connection, project) -> bool:
    return connections_for(project).filter(pk=connection.pk).exists()


def judges_of_project(project) -> QuerySet[Judge]:
    """The judges a project's leads see and run: the project's own and the operator's."""
    return Judge.objects.filter(project_or_operator_wide(project)).select_related("connection")


def judges_for_lead(user) -> QuerySet[Judge]:
    """The judges of the projects the user leads and the operator's (every judge for a
    superuser), by name; PermissionDenied for someone who leads no project."""
    if not is_lead_anywhere(user):
        raise PermissionDenied("only leads manage judges")
    judges = Judge.objects.select_related("connection").order_by("name", "id")
    return judges.filter(led_or_operator_wide(user))


def judge_changeable_by(user, judge: Judge) -> bool:
    """A lead changes their projects' judges; the operator's (no project) they only run, and
    so does the operator through a token limited to one project."""
    return judge.project_id is not None or operator_wide(user)


def _built_in_row(name: str) -> PromptTemplate:
    """A built-in as an unsaved row, to show (its stored row is made when a run uses it)."""
    answer_format, body = BUILT_IN[name]
    return PromptTemplate(name=name, version=0, answer_format=answer_format, body=body)


def templates_of_project(project) -> list[dict]:
    """One row per template name a project's judges can use: the project's own (latest
    version) and the built-ins it has not copied."""
    rows: dict[str, dict] = {}
    for template in PromptTemplate.objects.filter(project=project).order_by("name", "-version"):
        rows.setdefault(template.name, {"template": template, "built_in": False, "own": True})
    for name in BUILT_IN:
        if name in rows:
            rows[name]["built_in"] = True  # the project's copy replaces it
        else:
            rows[name] = {"template": _built_in_row(name), "built_in": True, "own": False}
    return [rows[name] for name in sorted(rows)]


def template_versions(project, name: str):
    """The project's versions of a template, newest first, and the built-in of that name
    (an unsaved row, or None)."""
    versions = list(PromptTemplate.objects.filter(project=project, name=name).order_by("-version"))
    return versions, (_built_in_row(name) if name in BUILT_IN else None)
