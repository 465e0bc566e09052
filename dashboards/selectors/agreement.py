"""Agreement of the experts (docs/architecture.md §6), per task and aspect and per annotator. The
headline figures use the same functions and inputs as `report --json`, so they agree."""

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, timedelta
from typing import Any, TypedDict

import numpy as np
from django.contrib.auth import get_user_model
from django.db.models import Count
from django.utils.translation import gettext_lazy, gettext_noop

from annotation.models import Rating
from content.models import Pair
from core.lazy_text import interpolate_lazy
from dashboards.charts import Chart, bar_chart, histogram, sparkline
from metrics.agreement import (
    krippendorff_alpha,
    rater_label_agreement,
    unanimous_direction,
)
from metrics.alpha_bootstrap import bootstrap_coincidences, interval_of
from metrics.annotator_quality import task_annotator_quality
from metrics.annotators import annotator_stats, others_sides
from metrics.bootstrap import Interval, bootstrap_mean_interval, bootstrap_ratio_interval
from metrics.inputs import aspect_scores, kept_labels, overall_scores
from projects.models import Project, Task
from projects.scale import side_of

RESAMPLES = 1000


class AlphaFigure(TypedDict):
    value: float | None
    interval: Interval | None


class Alpha(TypedDict):
    """Krippendorff's alpha at both levels, each with its bootstrap interval."""

    ordinal: AlphaFigure
    interval: AlphaFigure


class AspectFigures(Alpha):
    key: str
    label: str
    ratings: int


class TaskFigures(TypedDict):
    alpha: Alpha
    unanimous: float | None
    unanimous_interval: Interval | None
    unanimous_n: int
    rla: float | None
    rla_interval: Interval | None
    rla_n: int
    ratings: int
    pairs: int
    scores_chart: Chart
    spans_chart: Chart


class TaskAgreement(TaskFigures):
    """A task's figures (the template and the CSV read these keys)."""

    task: Task
    aspects: list[AspectFigures]
    quality: list[dict[str, Any]]  # an annotator's row: metrics.annotator_quality's figures
    competence_consensus: dict[str, Any]


class OverTime(TypedDict, total=False):
    weeks: int  # 0: no rating yet, and no chart
    throughput_chart: Chart
    agreement_chart: Chart


@dataclass(frozen=True)
class AgreementFigures:
    """The agreement page: per task, over time, and per annotator (their rows:
    metrics.annotators.AnnotatorStats's fields, their name and their trend's chart)."""

    tasks: list[TaskAgreement]
    over_time: OverTime
    annotators: list[dict[str, Any]]


def _alpha(units: list[list[int]], scale: int) -> Alpha:
    sampled = bootstrap_coincidences(units, scale, resamples=RESAMPLES)  # one for both levels
    return {
        "ordinal": {
            "value": krippendorff_alpha(units, scale, "ordinal"),
            "interval": interval_of(sampled, "ordinal"),
        },
        "interval": {
            "value": krippendorff_alpha(units, scale, "interval"),
            "interval": interval_of(sampled, "interval"),
        },
    }


def _complete_span_counts(project: Project) -> dict[int, dict[int, int]]:
    """{task: {span: pairs}} of the complete pairs (at least N ratings, gold checks apart), from
    the span stored with the ratings (consensus.py::decision_set). One query."""
    counts: defaultdict[int, dict[int, int]] = defaultdict(dict)
    rows = (
        Pair.objects.filter(project=project, rating_count__gte=project.annotators_per_pair)
        .exclude(status=Pair.Status.GOLD)
        .values("task_id", "consensus_span")
        .annotate(pairs=Count("id"))
        .order_by()
        .values_list("task_id", "consensus_span", "pairs")
    )
    for task_id, span, pairs in rows:
        if span is not None:  # a complete pair has its span; kept out of the bins otherwise
            counts[task_id][span] = pairs
    return counts


def _task_figures(
    project: Project, units: dict[int, list[int]], labels: dict[int, str], spans: dict[int, int]
) -> TaskFigures:
    """units: pair -> scores; labels: kept pair -> side; spans: span -> complete pairs."""
    scale, center, needed = project.scale_points, project.center, project.annotators_per_pair
    complete = [scores for scores in units.values() if len(scores) >= needed]
    # The same rule as metrics.agreement.unanimous_direction, one indicator per pair.
    unanimous = [float(len({side_of(s, center) for s in scores}) == 1) for scores in complete]
    agreeing: list[int] = []
    rated: list[int] = []
    for pair_id, label in labels.items():
        scores = units.get(pair_id, [])
        if scores:
            agreeing.append(sum(side_of(s, center) == label for s in scores))
            rated.append(len(scores))
    all_scores = [s for scores in units.values() for s in scores]
    span_bins = [spans.get(span, 0) for span in range(scale)]  # spans run 0..K-1
    return {
        "alpha": _alpha(list(units.values()), scale),
        "unanimous": unanimous_direction(list(units.values()), center, needed),
        "unanimous_interval": bootstrap_mean_interval(unanimous, resamples=RESAMPLES),
        "unanimous_n": len(complete),
        "rla": rater_label_agreement(units, labels, center),
        "rla_interval": bootstrap_ratio_interval(agreeing, rated, resamples=RESAMPLES),
        "rla_n": sum(rated),
        "ratings": len(all_scores),
        "pairs": len(units),
        "scores_chart": histogram(
            np.bincount(np.asarray(all_scores, dtype=int) - 1, minlength=scale).tolist()
            if all_scores
            else [0] * scale,
            [str(v) for v in range(1, scale + 1)],
            title=gettext_lazy("Overall scores (canonical: above the centre = A better)"),
            empty=gettext_lazy("No ratings yet."),
        ),
        "spans_chart": histogram(
            span_bins,
            [str(v) for v in range(scale)],
            title=interpolate_lazy(
                gettext_noop("Span of complete pairs (max span %(max)s)"), {"max": project.max_span}
            ),
            empty=gettext_lazy("No complete pairs yet."),
        ),
    }


def agreement(project: Project) -> AgreementFigures:
    tasks = list(project.tasks.order_by("slug"))
    labels, units, aspects = kept_labels(project), overall_scores(project), aspect_scores(project)
    spans = _complete_span_counts(project)
    ratings = (
        Rating.objects.filter(pair__project=project, imported=False)
        .exclude(pair__status=Pair.Status.GOLD)
        .values_list(
            "annotator_id",
            "pair_id",
            "overall",
            "active_seconds",
            "assignment__swapped",
            "created_at",
        )
    )  # placeholder raters of imported files are not people to review; gold checks apart
    annotator_rows = list(ratings)
    all_labels = {pid: side for by_task in labels.values() for pid, side in by_task.items()}
    stats = annotator_stats(annotator_rows, all_labels, project.center)
    quality = task_annotator_quality(project, tasks, labels)
    people = set(stats) | {a for q in quality.values() for a in q["annotators"]}
    names = dict(get_user_model().objects.filter(pk__in=people).values_list("pk", "username"))
    return AgreementFigures(
        tasks=[
            {
                "task": task,
                **_task_figures(project, units[task.pk], labels[task.pk], spans[task.pk]),
                "aspects": [
                    {
                        "key": aspect["key"],
                        "label": aspect.get("label", aspect["key"]),
                        "ratings": sum(len(v) for v in aspects[task.pk][aspect["key"]].values()),
                        **_alpha(
                            list(aspects[task.pk][aspect["key"]].values()), project.scale_points
                        ),
                    }
                    for aspect in task.aspects
                ],
                "quality": _quality_rows(quality[task.pk], names),
                "competence_consensus": quality[task.pk]["competence_consensus"],
            }
            for task in tasks
        ],
        over_time=_over_time(annotator_rows, project.center),
        annotators=[
            {
                "name": names.get(annotator_id, "?"),
                **s.as_dict(),
                "trend_chart": sparkline(
                    [window.agreement for window in s.trend],
                    title=gettext_lazy("agreement over time"),
                ),
            }
            for annotator_id, s in stats.items()
        ],
    )


WEEKS_SHOWN = 12


def _over_time(rows: Sequence[tuple[Any, ...]], center: float) -> OverTime:
    """The experts' throughput and agreement per week (the last WEEKS_SHOWN weeks with
    ratings): ratings submitted, and the share of them on the side of the other experts'
    mean on the same pair (leave-one-out, as the annotators' table), as two charts."""
    weekly: defaultdict[date, list[int]] = defaultdict(lambda: [0, 0, 0])
    # week -> [ratings, matched, compared]
    for row, reference in zip(rows, others_sides(rows, center), strict=True):
        _annotator, _pair, overall, *_rest, created_at = row
        day = created_at.date()
        week = weekly[day - timedelta(days=day.weekday())]
        week[0] += 1
        if reference is not None:
            week[1] += side_of(overall, center) == reference
            week[2] += 1
    weeks = sorted(weekly)[-WEEKS_SHOWN:]
    if not weeks:
        return {"weeks": 0}
    labels = [
        interpolate_lazy(gettext_noop("week of %(date)s"), {"date": f"{week:%Y-%m-%d}"})
        for week in weeks
    ]
    most = max(weekly[week][0] for week in weeks)
    return {
        "weeks": len(weeks),
        "throughput_chart": bar_chart(
            [(label, weekly[w][0], None, "") for label, w in zip(labels, weeks, strict=True)],
            maximum=most,
            percent=False,
            title=gettext_lazy("Ratings submitted per week"),
        ),
        "agreement_chart": bar_chart(
            [
                (label, weekly[w][1] / weekly[w][2] if weekly[w][2] else None, None, weekly[w][2])
                for label, w in zip(labels, weeks, strict=True)
            ],
            title=gettext_lazy("Ratings on the side of the other experts, per week"),
        ),
    }


def _quality_rows(task_quality: dict[str, Any], names: dict[int, str]) -> list[dict[str, Any]]:
    """The task's annotators for the quality table: flagged and paused ones first."""
    rows = [
        {"annotator_id": annotator, "name": names.get(annotator, "?"), **figures}
        for annotator, figures in task_quality["annotators"].items()
    ]
    for row in rows:  # held back by gold checks or a failed qualification
        qualification = row["qualification"]
        row["held"] = row["paused"] or bool(qualification and not qualification["passed"])
    return sorted(rows, key=lambda r: (not r["held"], not r["flags"], r["name"]))
