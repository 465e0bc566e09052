"""The judges table (MMRB2's: judges as rows, tasks as columns, the average last) and its side
tables, against the experts' labels. Figures follow docs/architecture.md §6.2 and
`report --json`."""

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypedDict

from django.contrib.auth import get_user_model
from django.db.models import BooleanField, ExpressionWrapper, Q, QuerySet, TextField
from django.db.models.functions import Cast
from django.utils.translation import gettext_lazy, gettext_noop

from content.models import Pair
from core.lazy_text import interpolate_lazy
from dashboards.charts import Chart, bar_chart
from judging.models import IMPORTED_SCALE, POINTWISE_SCALES
from metrics.annotators import human_ceiling
from metrics.bias_cards import task_bias_cards
from metrics.group_bias import group_bias
from metrics.inputs import (
    PAIRWISE,
    AnnotatorRatings,
    JudgeInputs,
    Labels,
    annotator_ratings,
    evaluated_pairs,
    expert_ratings,
    group_scores,
    judge_inputs,
    kept_labels,
)
from metrics.judge_accuracy import average_accuracy, judge_task_stats, tasks_covered
from metrics.judge_breakdowns import (
    PREFERRED_HAS_IMAGE,
    PREFERRED_LACKS_IMAGE,
    GroupAccuracy,
    image_bias_groups,
    majority_vote_curve,
    pair_counts_interval,
    split_accuracy,
)
from metrics.judge_ppi import average_over_tasks, plan_summary
from metrics.report import powered_figures_by_task
from projects.models import Project, Task

if TYPE_CHECKING:  # the stubs' type of a lazy translation; not installed at run time
    from django_stubs_ext import StrOrPromise

MAJORITY_KS = (1, 3, 5, 7, 9)
SPLITS = ("same model", "cross model", PREFERRED_HAS_IMAGE, PREFERRED_LACKS_IMAGE)
RESAMPLES = 300  # per judge and task


class JudgeRow(TypedDict):
    """A judge's row of the table (the template reads these keys)."""

    judge: str
    cells: list[dict[str, Any] | None]  # per task: its figures, None without verdicts
    average: float | None
    powered_average: dict[str, Any] | None  # prediction-powered, over the labelled tasks
    covered: int
    samples: int
    scale: "StrOrPromise"  # lazy: translated where the page shows it
    splits: list[GroupAccuracy]
    majority: list[tuple[float | None, int]]


class TaskChart(TypedDict):
    task: Task
    chart: Chart


class TaskRows(TypedDict):
    """A task's rows of a side table (bias cards, group bias): a judge's name and figures."""

    task: Task
    rows: list[dict[str, Any]]


@dataclass(frozen=True)
class JudgeFigures:
    """The judges page (the template and the CSV read these fields)."""

    tasks: list[Task]
    table: list[JudgeRow]
    bias_cards: list[TaskRows]
    group_bias: list[TaskRows]
    humans: list[dict[str, Any] | None]  # per task: the experts' ceiling
    human_average: float | None
    human_covered: int
    labelled_tasks: int
    evaluated_pairs: list[int]
    average_chart: Chart
    task_charts: list[TaskChart]
    ks: tuple[int, ...]
    planner: list[dict[str, Any]]  # per task: metrics.judge_ppi.plan_summary and more
    target_half_width: float
    sampled: bool


def scale_label(scale: str) -> "StrOrPromise":
    """How a judge's scale reads in a table: pairwise, or the pointwise scale(s)."""
    if scale == PAIRWISE:
        return gettext_lazy("pairwise")
    names: list[StrOrPromise] = []
    for part in scale.split(","):
        if part == IMPORTED_SCALE:
            names.append(gettext_lazy("imported scores"))
        elif part in POINTWISE_SCALES:
            low, high = POINTWISE_SCALES[part]
            names.append(f"{low}–{high}")
        else:
            names.append(part)
    return interpolate_lazy(gettext_noop("pointwise %(scales)s"), {"scales": names})


def _majority(
    verdicts: Sequence[tuple[Any, ...]], labels: dict[int, str]
) -> list[tuple[float | None, int]]:
    """(accuracy, evaluated) of the majority of the first K samples, for each K."""
    curve = majority_vote_curve(verdicts, labels, MAJORITY_KS)
    return [curve.get(k, (None, 0)) for k in MAJORITY_KS]


# Any: the fields are annotated by name from a dict, which the Django plugin cannot follow.
def _with_image_flags(pairs: QuerySet[Pair]) -> QuerySet[Any]:
    """Annotate whether each response's part list holds an image, in SQL (no JSON decoding
    in Python): the serialised list contains `["image",` only for image parts (a quote in a
    text part is escaped)."""
    flags: dict[str, ExpressionWrapper[Any]] = {}
    for side in ("a", "b"):
        text = Cast(f"response_{side}__content", output_field=TextField())
        pairs = pairs.alias(**{f"{side}_text": text})
        flags[f"{side}_image"] = ExpressionWrapper(
            Q(**{f"{side}_text__contains": '["image",'}), output_field=BooleanField()
        )
    return pairs.annotate(**flags)


def _pair_groups(project: Project, labels: dict[int, str]) -> dict[int, tuple[str, ...]]:
    """pair -> the SPLITS groups it belongs to (a pair may be in two)."""
    same_model: dict[int, str] = {}
    image_sides: dict[int, tuple[bool, bool]] = {}
    rows = _with_image_flags(evaluated_pairs(project))
    for pair_id, same, a_image, b_image in rows.values_list(
        "id", "same_model", "a_image", "b_image"
    ):
        same_model[pair_id] = "same model" if same else "cross model"
        image_sides[pair_id] = (a_image, b_image)
    image_groups = image_bias_groups(image_sides, labels)
    return {p: (same_model[p], image_groups[p]) if p in image_groups else (same_model[p],)
            for p in same_model}  # fmt: skip


def judge_figures(project: Project) -> JudgeFigures:
    tasks = list(project.tasks.order_by("slug"))
    labels = kept_labels(project)
    all_labels = {p: side for by_task in labels.values() for p, side in by_task.items()}
    groups = _pair_groups(project, all_labels)
    judged = judge_inputs(project)  # a judge with verdicts only on other pairs still gets a row
    # The average is over the tasks with labelled pairs, and only when a judge has a figure on
    # each: a mean over the tasks it happens to cover would rank it against others unfairly.
    labelled = [index for index, task in enumerate(tasks) if labels[task.pk]]
    powered = powered_figures_by_task(project)

    table: list[JudgeRow] = []
    for judge_id in judged.by_name():
        samples = judged.samples[judge_id]
        cells: list[dict[str, Any] | None] = []
        everything = []
        counts: dict[int, list[int]] = {}  # pair -> [correct, evaluated], by judge_task_stats
        for task in tasks:
            rows = judged.rows[judge_id].get(task.pk, [])
            if samples > 1:  # the majority curve needs them all together
                everything += rows
            if not rows:
                cells.append(None)
                continue
            stats = judge_task_stats(
                rows, labels[task.pk], samples, counts, orders=judged.orders[judge_id]
            )
            rated = {p: counts[p] for p in labels[task.pk] if p in counts}
            cells.append(
                {
                    **stats.as_dict(),
                    "task_name": task.name,
                    "rated_pairs": len(rated),
                    "interval": pair_counts_interval(rated, resamples=RESAMPLES),
                    "powered": powered[task.pk]["judges"].get(judge_id),
                }
            )
        accuracies = [cell["accuracy"] if (cell := cells[i]) else None for i in labelled]
        by_task = [cell["powered"] if (cell := cells[i]) else None for i in labelled]
        table.append(
            {
                "judge": judged.names[judge_id],
                "cells": cells,
                "average": average_accuracy(accuracies),
                "powered_average": average_over_tasks(
                    [figures for figures in by_task if figures is not None]
                )
                if by_task and None not in by_task
                else None,
                "covered": tasks_covered(accuracies),
                "samples": samples,
                "scale": scale_label(judged.scale(judge_id)),
                "splits": split_accuracy(counts, groups, SPLITS),
                "majority": _majority(everything, all_labels) if samples > 1 else [],
            }
        )
    ratings = annotator_ratings(project)  # the bias cards' people
    ceiling = _expert_ceiling(project, tasks, labels)
    humans = [figures["accuracy"] if figures else None for figures in ceiling]
    human_accuracies = [humans[i] for i in labelled]
    # (label, value, interval, n) as bar_chart draws them.
    chart_rows: list[tuple[StrOrPromise, float | None, None, int | str]] = [
        (
            row["judge"] if row["average"] is not None
            else interpolate_lazy(
                gettext_noop("%(judge)s (%(covered)s of %(count)s tasks)"),
                {"judge": row["judge"], "covered": row["covered"], "count": len(labelled)},
            ),
            row["average"], None, sum(c["evaluated"] for c in row["cells"] if c),
        )
        for row in sorted(table, key=lambda r: -(r["average"] or 0))
    ]  # fmt: skip
    if any(value is not None for value in humans):
        chart_rows.insert(
            0,
            (
                gettext_lazy("experts, each against the others"),
                average_accuracy(human_accuracies),
                None,
                sum(figures["compared"] for figures in ceiling if figures),  # their trials
            ),
        )
    per_task_charts: list[TaskChart] = [
        {
            "task": task,
            "chart": bar_chart(
                [
                    (row["judge"], cell["accuracy"], cell["interval"], cell["evaluated"])
                    for row in table
                    if (cell := row["cells"][index]) is not None
                ],
                title=interpolate_lazy(
                    gettext_noop("Judge accuracy on %(task)s with 95%% intervals"),
                    {"task": task.name},
                ),
                empty=gettext_lazy("No judge has a verdict on this task's labelled pairs yet."),
            ),
        }
        for index, task in enumerate(tasks)
    ]
    return JudgeFigures(
        tasks=tasks,
        table=table,
        bias_cards=_bias_cards(tasks, labels, judged, project, ratings),
        group_bias=_group_bias(tasks, judged, group_scores(project, judged)),
        humans=ceiling,
        human_average=average_accuracy(human_accuracies),
        human_covered=tasks_covered(human_accuracies),
        labelled_tasks=len(labelled),
        evaluated_pairs=[len(labels[task.pk]) for task in tasks],
        average_chart=bar_chart(
            chart_rows,
            title=gettext_lazy("Average accuracy over tasks"),
            empty=gettext_lazy("No judge has a figure yet."),
        ),
        task_charts=per_task_charts,
        ks=MAJORITY_KS,
        planner=_planner(tasks, powered, judged.names, project.target_half_width),
        target_half_width=project.target_half_width,
        sampled=project.rating_mode == Project.RatingMode.SAMPLE,
    )


def _expert_ceiling(
    project: Project, tasks: list[Task], labels: Labels
) -> list[dict[str, Any] | None]:
    """Per task, the fair human ceiling (metrics/annotators.py::human_ceiling) over every
    expert rating, imported ones too; None without any pair rated by two experts."""
    ratings = expert_ratings(project)
    return [
        human_ceiling(ratings[task.pk], project.center, labels[task.pk], resamples=RESAMPLES)
        for task in tasks
    ]


def _planner(
    tasks: list[Task], powered: dict[int, Any], names: dict[int, str], target: float
) -> list[dict[str, Any]]:
    """Per task: how many more rated pairs bring every judge to ± target, classical and
    prediction-powered (the most any judge needs), and what separates the two closest."""
    rows = []
    for task in tasks:
        figures = list(powered[task.pk]["judges"].values())
        closest = powered[task.pk]["closest"]
        rows.append(
            {
                "task": task,
                "rated": max((f["rated"] for f in figures), default=0),
                "judged": max((f["judged"] for f in figures), default=0),
                **plan_summary(figures),
                "closest": closest and {**closest, "names": [names[j] for j in closest["judges"]]},
                "sample": powered[task.pk].get("sample"),
            }
        )
    return rows


def _card_has_data(card: dict[str, Any]) -> bool:
    """A bias card with a pair to show (an empty one reads '— (—) n=0' and is left out)."""
    return bool(
        card["length"]["text"]["pairs"]
        or card["length"]["images"]["pairs"]
        or card["self_preference"]["pairs"]
        or any(expert["pairs"] for expert in card["experts"]["per_expert"].values())
    )


def _group_bias(
    tasks: list[Task], judged: JudgeInputs, rows_by_task: dict[int, dict[int, Any]]
) -> list[TaskRows]:
    """Per task with group-labelled responses, MJ-Bench's ACC/NDS/GES of each judge that
    scored them (metrics/group_bias.py)."""
    return [
        {
            "task": task,
            "rows": [
                {"judge": judged.names[judge_id], **group_bias(rows).as_dict()}
                for judge_id in judged.by_name()
                if (rows := rows_by_task[task.pk].get(judge_id))
            ],
        }
        for task in tasks
        if rows_by_task.get(task.pk)
    ]


def _bias_cards(
    tasks: list[Task],
    labels: Labels,
    judged: JudgeInputs,
    project: Project,
    ratings: AnnotatorRatings,
) -> list[TaskRows]:
    """Per task with judges, one row of bias cards per judge (metrics/judge_bias.py)."""
    people = {annotator for by_task in ratings.values() for annotator in by_task}
    names = dict(get_user_model().objects.filter(pk__in=people).values_list("pk", "username"))
    cards = task_bias_cards(project, tasks, labels, judged, names, ratings)
    return [
        {
            "task": task,
            "rows": [
                {"judge": judged.names[judge_id], **card}
                for judge_id, card in cards[task.pk].items()
            ],
        }
        for task in tasks
        if any(_card_has_data(card) for card in cards.get(task.pk, {}).values())
        if cards.get(task.pk)
    ]
