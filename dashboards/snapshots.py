"""The heavy dashboard pages (agreement, judges, models) are served from figures precomputed
into a database table, one row per project and page (FigureSnapshot), stamped with the
version of the project's data they were computed from.

A view reads the current version (a few aggregates over small tables) and the page's row:
- the row is of this version: its figures, nothing computed;
- no row yet, or the last computation was quick (under ARBITER_FIGURES_INLINE_MS, 500 ms:
  small projects are always current): computed now, stored;
- otherwise the stored figures are shown, marked with the time they were computed, and one
  refresh is started in the background (a Celery task; a thread in the embedded mode, as
  core/outbox.py's `dispatch_on_commit` decides). A periodic task (`figures_refresh_stale`,
  Celery beat) also refreshes every stale row, so a large project's pages catch up with new
  ratings and verdicts without anyone waiting.

Each page's figures are a frozen dataclass (AgreementFigures, JudgeFigures, ModelFigures,
JudgeSets), its parts typed dictionaries the templates read as before. A row holds the figures
pickled (they hold Task rows and the charts' lazy texts: the table is written only by this
module, from the server's own computations, as Django's cache backends pickle theirs) together
with the *shape* of their class: a digest of its fields' names and types, followed into every
dataclass and TypedDict it holds (`shape_of`). Nothing is bumped by hand:
- a row whose shape is not the code's (or that does not unpickle, or holds another class) reads
  as no row: recomputed, never handed to a template that expects other fields;
- the digest of every page's shape is part of the data version, so a deployment that changes
  a shape makes every row stale and the periodic refresh recomputes them behind.
A change of what a figure means that keeps its shape moves no version: give the changed figure
a new name (the shape then changes) when old rows must not be shown.
"""

import dataclasses
import hashlib
import logging
import pickle
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from functools import partial
from typing import (
    Any,
    Generic,
    Literal,
    TypeVar,
    get_args,
    get_origin,
    get_type_hints,
    is_typeddict,
    overload,
)

from django.conf import settings
from django.db.models import Count, Max, Q, Sum
from django.utils import timezone

from annotation.models import Adjudication, AnnotatorPause, Qualification
from content.models import Pair
from core.outbox import dispatch_on_commit
from dashboards.models import FigureSnapshot
from dashboards.selectors.agreement import AgreementFigures, agreement
from dashboards.selectors.judge_disagreement import JudgeSets, judges_disagreement
from dashboards.selectors.judges import JudgeFigures, judge_figures
from dashboards.selectors.models import ModelFigures, model_figures
from judging.models import Judge, JudgeRun, JudgeRunChunk
from projects.models import Project, Task

log = logging.getLogger(__name__)

PageFigures = AgreementFigures | JudgeFigures | ModelFigures | JudgeSets
F = TypeVar("F", AgreementFigures, JudgeFigures, ModelFigures, JudgeSets)
Page = Literal["agreement", "judges", "models", "disagreement"]

SELECTORS: dict[str, Callable[[Project], PageFigures]] = {
    "agreement": agreement,
    "judges": judge_figures,
    "models": model_figures,
    # Not a page: the pair browser's "judges disagree" sets (selectors/judge_disagreement.py).
    "disagreement": judges_disagreement,
}
KINDS: dict[str, type[PageFigures]] = {
    "agreement": AgreementFigures,
    "judges": JudgeFigures,
    "models": ModelFigures,
    "disagreement": JudgeSets,
}
# A refresh that has not finished after this long is taken to have died: another may start.
REFRESH_CLAIM = timedelta(minutes=30)


def _described(kind: object, seen: set[str]) -> str:
    """A canonical text of a type: a dataclass or TypedDict by its fields' names and types in
    order, recursively (a class met again by its name only); a generic by its arguments."""
    if isinstance(kind, type) and (dataclasses.is_dataclass(kind) or is_typeddict(kind)):
        name = f"{kind.__module__}.{kind.__qualname__}"
        if name in seen:
            return name
        seen.add(name)
        try:
            hints: dict[str, Any] = get_type_hints(kind)
        except (NameError, TypeError):  # a name for the type checker only, or array[int]:
            # each field as written (a quoted annotation is its own text)
            hints = dict(kind.__annotations__)
        fields = ",".join(f"{key}:{_described(hint, seen)}" for key, hint in hints.items())
        return f"{name}{{{fields}}}"
    arguments = get_args(kind)
    if arguments:
        inner = ",".join(_described(argument, seen) for argument in arguments)
        return f"{_described(get_origin(kind), seen)}[{inner}]"
    if isinstance(kind, type):
        return f"{kind.__module__}.{kind.__qualname__}"
    return repr(kind)


def shape_of(kind: type) -> str:
    """The digest of a figures class's shape (the module's docstring)."""
    return hashlib.sha1(_described(kind, set()).encode()).hexdigest()


SHAPES = {page: shape_of(kind) for page, kind in KINDS.items()}
# Part of every data version: a changed shape makes every stored row stale.
SHAPES_DIGEST = hashlib.sha1("|".join(sorted(SHAPES.values())).encode()).hexdigest()


def data_version(project: Project) -> str:
    """What the figures depend on, from aggregates over the project's pairs and over its
    judges, runs and chunks. Neither ratings nor verdicts (millions of rows) are scanned: every
    rating write saves its pair's derived columns (rating_count, consensus, updated_at:
    ratings._pair_update, consensus.pairs_decide, the import), and every verdict write stamps
    its chunk (or, for a file import, makes a run)."""
    parts = [
        # Count("*"), not of a column: PostgreSQL answers from the index pair_project_version.
        Pair.objects.filter(project=project).aggregate(
            v=Max("updated_at"), n=Count("*"), r=Sum("rating_count")
        ),
        # The project's judges and the operator's judges that ran on it (a rename shows).
        Judge.objects.filter(Q(project=project) | Q(runs__project=project))
        .distinct()
        .aggregate(v=Max("updated_at"), n=Count("id", distinct=True)),
        JudgeRun.objects.filter(project=project).aggregate(v=Max("created_at"), n=Count("id")),
        JudgeRunChunk.objects.filter(run__project=project).aggregate(
            v=Max("verdicts_stored_at"), n=Count("id")
        ),
        Adjudication.objects.filter(pair__project=project).aggregate(v=Max("id"), n=Count("id")),
        AnnotatorPause.objects.filter(task__project=project).aggregate(
            v=Max("readmitted_at"), n=Count("id")
        ),
        Qualification.objects.filter(task__project=project).aggregate(
            v=Count("id", filter=Q(passed=True)), n=Count("id")
        ),
    ]
    # The quality-control settings of the tasks (thresholds, speed floor) shape the figures.
    quality = list(
        Task.objects.filter(project=project)
        .order_by("pk")
        .values_list(
            "pk",
            "slug",  # the pages show the tasks' names and aspects as they were computed
            "name",
            "aspects",
            "gold_rate",
            "gold_action",
            "gold_min_accuracy",
            "gold_min_answers",
            "min_active_seconds",
            "qualification_pass",
        )
    )
    settings_ = (
        project.scale_points,
        project.annotators_per_pair,
        project.max_span,
        project.ambiguous_half_width,
        # The prediction-powered figures: the planner's target, and whether (and how much) the
        # project rates a sample (starting one freezes the pairs' weights).
        project.target_half_width,
        project.rating_mode,
        project.rating_budget,
    )
    aggregates = "|".join(f"{part['v']}/{part['n']}/{part.get('r')}" for part in parts)
    text = f"{SHAPES_DIGEST}|{aggregates}|{settings_}|{quality}"
    return hashlib.sha1(text.encode()).hexdigest()


@dataclass(frozen=True)
class Figures(Generic[F]):
    """A page's figures and how current they are. `figures` is None while the first
    computation runs in the background (the page says so and looks again shortly)."""

    figures: F | None
    computed_at: datetime
    compute_seconds: float
    current: bool  # False: the data changed since; a refresh is under way


def figures_context(figures: PageFigures) -> dict[str, Any]:
    """The figures' fields by name, as a template's context (and the CSV tables) read them."""
    return {field.name: getattr(figures, field.name) for field in dataclasses.fields(figures)}


def _pickled(page: str, figures: PageFigures | None) -> bytes:
    return pickle.dumps((SHAPES[page], figures), protocol=pickle.HIGHEST_PROTOCOL)


def _store(
    project: Project, page: str, version: str, figures: PageFigures, seconds: float
) -> datetime:
    now = timezone.now()
    FigureSnapshot.objects.bulk_create(
        [
            FigureSnapshot(
                project=project,
                page=page,
                version=version,
                figures=_pickled(page, figures),
                computed_at=now,
                compute_seconds=seconds,
                refreshing_since=None,
            )
        ],
        update_conflicts=True,
        unique_fields=["project", "page"],
        update_fields=["version", "figures", "computed_at", "compute_seconds", "refreshing_since"],
    )
    return now


def _compute(
    project: Project, page: str, version: str | None = None
) -> tuple[str, PageFigures, float]:
    """The page's figures for the data as it is now, with the version read first (or given,
    read just before): data that changes during the computation leaves the row stale, never
    falsely current."""
    version = data_version(project) if version is None else version
    started = time.perf_counter()
    figures = SELECTORS[page](project)
    return version, figures, time.perf_counter() - started


@overload
def figures_for(
    project: Project, page: Literal["agreement"], *, wait_for_first: bool = True
) -> Figures[AgreementFigures]: ...
@overload
def figures_for(
    project: Project, page: Literal["judges"], *, wait_for_first: bool = True
) -> Figures[JudgeFigures]: ...
@overload
def figures_for(
    project: Project, page: Literal["models"], *, wait_for_first: bool = True
) -> Figures[ModelFigures]: ...
@overload
def figures_for(
    project: Project, page: Literal["disagreement"], *, wait_for_first: bool = True
) -> Figures[JudgeSets]: ...
@overload
def figures_for(project: Project, page: str, *, wait_for_first: bool = True) -> Figures[Any]: ...
def figures_for(project: Project, page: str, *, wait_for_first: bool = True) -> Figures[Any]:
    """The figures a view shows (see the module's docstring). With wait_for_first=False,
    never None: while the first figures are computed ahead they are computed here too (a
    filter cannot say "come back later")."""
    version = data_version(project)
    row = FigureSnapshot.objects.filter(project=project, page=page).first()
    stored = _unpickled(row)  # None: no row yet, or written by code that no longer reads it
    if row is not None and stored is None and _refreshing(row) and wait_for_first:
        # The first figures are being computed ahead (figures_prepare): wait for them
        # rather than compute them a second time in this request.
        return Figures(None, row.computed_at, 0.0, False)
    if row is not None and stored is not None:
        if row.version == version:
            return Figures(stored, row.computed_at, row.compute_seconds, True)
        # Below the setting a stale page is recomputed while the lead waits; above it the lead
        # sees the last figures at once (inside the 500 ms target) and the refresh runs behind.
        if row.compute_seconds * 1000 >= settings.ARBITER_FIGURES_INLINE_MS:
            refresh_request(project, page)
            return Figures(stored, row.computed_at, row.compute_seconds, False)
    version, figures, seconds = _compute(project, page, version)
    computed_at = _store(project, page, version, figures, seconds)
    return Figures(figures, computed_at, seconds, True)


def stored_judge_figures(project: Project) -> JudgeFigures | None:
    """The judges page's last stored figures, current or not, computing nothing (None: none
    yet)."""
    stored = _unpickled(FigureSnapshot.objects.filter(project=project, page="judges").first())
    return stored if isinstance(stored, JudgeFigures) else None


def _unpickled(row: FigureSnapshot | None) -> PageFigures | None:
    """The row's figures, or None: no row, a row figures_prepare made and not yet filled, or
    one the code can no longer read (another shape, a class renamed or removed since)."""
    if row is None:
        return None
    try:
        stored = pickle.loads(row.figures)
    except Exception:  # a class renamed or removed since it was stored
        stored = ()
    if stored is None:  # a row figures_prepare made before shapes were stored
        return None
    match stored:
        case (str() as shape, figures) if shape == SHAPES.get(row.page) and isinstance(
            figures, KINDS[row.page]
        ):
            read: PageFigures = figures
            return read
        case (str(), None):  # a row figures_prepare made, not yet filled
            return None
    log.warning(
        "figures of project %s/%s are of another shape; recomputing", row.project_id, row.page
    )
    return None


def _claim(project_id: int, page: str) -> bool:
    """Mark the row as being refreshed; False when another refresh holds it."""
    now = timezone.now()
    return bool(
        FigureSnapshot.objects.filter(project_id=project_id, page=page)
        .filter(Q(refreshing_since__isnull=True) | Q(refreshing_since__lt=now - REFRESH_CLAIM))
        .update(refreshing_since=now)
    )


def _refreshing(row: FigureSnapshot) -> bool:
    since = row.refreshing_since
    return since is not None and since >= timezone.now() - REFRESH_CLAIM


def figures_prepare(project: Project) -> int:
    """After a change that moves the figures (an import, a finished run, a decision): start
    the background refresh of every page whose figures are not being refreshed already; a
    page never computed gets a row saying its first figures are on their way. How many
    refreshes were started."""
    started = 0
    for page in SELECTORS:
        _row, created = FigureSnapshot.objects.get_or_create(
            project=project,
            page=page,
            defaults={
                "version": "",
                "figures": _pickled(page, None),
                "computed_at": timezone.now(),
                "compute_seconds": 0.0,
                "refreshing_since": timezone.now(),
            },
        )
        if created or _claim(project.pk, page):
            _refresh_dispatch(project.pk, page, background=True)
            started += 1
    return started


def refresh_request(project: Project, page: str) -> None:
    """Start one background refresh of the page's figures, unless one is under way. With the
    broker unreachable the stale figures still show and the claim is freed: a later view
    tries again."""
    if _claim(project.pk, page):
        _refresh_dispatch(project.pk, page, background=True)  # the lead's page must not wait


def _refresh_dispatch(project_id: int, page: str, *, background: bool) -> None:
    from dashboards.tasks import figures_refresh

    dispatch_on_commit(
        figures_refresh,
        project_id,
        page,
        background=background,
        unsent=partial(_unclaim, project_id, page),
    )


def _unclaim(project_id: int, page: str) -> None:
    FigureSnapshot.objects.filter(project_id=project_id, page=page).update(refreshing_since=None)


def figures_refresh_run(project_id: int, page: str) -> None:
    """Recompute and store a page's figures (the background task's work)."""
    project = Project.objects.filter(pk=project_id).first()
    if project is None or page not in SELECTORS:
        return
    try:
        version, figures, seconds = _compute(project, page)
        _store(project, page, version, figures, seconds)
    except Exception:
        _unclaim(project.pk, page)
        raise
    log.info("figures of %s/%s refreshed in %.1f s", project.slug, page, seconds)


def stale_refresh() -> int:
    """Start a refresh of every stored page whose project's data changed since (the periodic
    task); how many were started."""
    started = 0
    rows = FigureSnapshot.objects.select_related("project").defer("figures")
    versions: dict[int, str] = {}
    for row in rows:
        if row.project_id not in versions:
            versions[row.project_id] = data_version(row.project)
        if row.version != versions[row.project_id] and _claim(row.project_id, row.page):
            _refresh_dispatch(row.project_id, row.page, background=False)
            started += 1
    return started
