"""The judges table (MMRB2's: judges as rows, tasks as columns, the average last) and its side
tables, against the experts' labels. Figures follow DESIGN.md §5 and `report --json`."""

from collections import defaultdict

from annotation.models import Pair, Project, Rating
from dashboards.charts import bar_chart
from judging.models import Judge, Verdict
from metrics.agreement import rater_label_agreement
from metrics.judges import average_accuracy, judge_task_stats
from metrics.judges_extra import (
    PREFERRED_HAS_IMAGE,
    PREFERRED_LACKS_IMAGE,
    accuracy_interval,
    image_bias_groups,
    majority_vote_curve,
    split_accuracy,
)

MAJORITY_KS = (1, 3, 5, 7, 9)
SPLITS = ("same model", "cross model", PREFERRED_HAS_IMAGE, PREFERRED_LACKS_IMAGE)
RESAMPLES = 500  # per judge and task; the page must stay under a second at MMRB2 scale


def _splits(verdicts, labels, same_model, image_groups) -> list[tuple]:
    """(accuracy, evaluated) on same-model, cross-model, preferred-has-image and
    preferred-lacks-image pairs, in SPLITS order."""
    by_group = {
        **split_accuracy(verdicts, labels, same_model),
        **split_accuracy(verdicts, labels, image_groups),
    }
    return [by_group.get(group, (None, 0)) for group in SPLITS]


def _majority(verdicts, labels) -> list[tuple]:
    """(accuracy, evaluated) of the majority of the first K samples, for each K."""
    curve = majority_vote_curve(verdicts, labels, MAJORITY_KS)
    return [curve.get(k, (None, 0)) for k in MAJORITY_KS]


def _has_image(content) -> bool:
    return any(kind == "image" for kind, _value in content or [])


def judges(project: Project) -> dict:
    tasks = list(project.tasks.order_by("slug"))
    labels: dict = defaultdict(dict)
    same_model, image_sides = {}, {}
    kept = Pair.objects.filter(project=project, status=Pair.Status.KEPT, label__in=["A", "B"])
    rows = kept.values_list(
        "id", "task_id", "label", "same_model", "response_a__content", "response_b__content"
    )
    for pair_id, task_id, label, same, content_a, content_b in rows:
        labels[task_id][pair_id] = label
        same_model[pair_id] = "same model" if same else "cross model"
        image_sides[pair_id] = (_has_image(content_a), _has_image(content_b))
    all_labels = {p: side for by_task in labels.values() for p, side in by_task.items()}
    image_groups = image_bias_groups(image_sides, all_labels)

    verdicts: dict = defaultdict(lambda: defaultdict(list))
    samples: dict = defaultdict(int)
    for judge_id, task_id, pair_id, order, sample, choice in Verdict.objects.filter(
        pair__project=project
    ).values_list("judge_id", "pair__task_id", "pair_id", "order", "sample", "choice"):
        verdicts[judge_id][task_id].append((pair_id, order, sample, choice))
        samples[judge_id] = max(samples[judge_id], sample + 1)
    names = dict(Judge.objects.filter(pk__in=verdicts).values_list("pk", "name"))

    human: dict = defaultdict(lambda: defaultdict(list))
    for task_id, pair_id, overall in Rating.objects.filter(pair__project=project).values_list(
        "pair__task_id", "pair_id", "overall"
    ):
        human[task_id][pair_id].append(overall)

    table = []
    for judge_id in sorted(verdicts, key=lambda j: names[j]):
        cells, everything = [], []
        for task in tasks:
            rows = verdicts[judge_id].get(task.pk, [])
            everything += rows
            if not rows:
                cells.append(None)
                continue
            stats = judge_task_stats(rows, labels[task.pk], samples[judge_id])
            cells.append(
                {
                    **stats.as_dict(),
                    "interval": accuracy_interval(rows, labels[task.pk], resamples=RESAMPLES),
                }
            )
        average = average_accuracy(cell["accuracy"] for cell in cells if cell)
        table.append(
            {
                "judge": names[judge_id],
                "cells": cells,
                "average": average,
                "samples": samples[judge_id],
                "splits": _splits(everything, all_labels, same_model, image_groups),
                "majority": _majority(everything, all_labels) if samples[judge_id] > 1 else [],
            }
        )
    humans = [
        rater_label_agreement(human[task.pk], labels[task.pk], project.center) for task in tasks
    ]
    chart_rows = [
        (row["judge"], row["average"], None, sum(c["evaluated"] for c in row["cells"] if c))
        for row in sorted(table, key=lambda r: -(r["average"] or 0))
    ]
    if any(value is not None for value in humans):
        chart_rows.insert(0, ("experts (rater/label)", average_accuracy(humans), None, "—"))
    per_task_charts = [
        {
            "task": task,
            "chart": bar_chart(
                [
                    (row["judge"], cell["accuracy"], cell["interval"], cell["evaluated"])
                    for row in table
                    if (cell := row["cells"][index]) is not None
                ],
                title=f"Judge accuracy on {task.name} with 95% intervals",
            ),
        }
        for index, task in enumerate(tasks)
    ]
    return {
        "tasks": tasks,
        "table": table,
        "humans": humans,
        "human_average": average_accuracy(humans),
        "evaluated_pairs": [len(labels[task.pk]) for task in tasks],
        "average_chart": bar_chart(chart_rows, title="Average accuracy over tasks"),
        "task_charts": per_task_charts,
        "ks": MAJORITY_KS,
    }
