"""The judges table (MMRB2's: judges as rows, tasks as columns, the average last) and its side
tables, against the experts' labels. Figures follow docs/architecture.md §6.2 and
`report --json`."""

from collections import defaultdict

from django.db.models import BooleanField, ExpressionWrapper, Max, Q, TextField
from django.db.models.functions import Cast

from annotation.models import Pair, Project, Rating
from dashboards.charts import bar_chart
from judging.models import Judge, Verdict
from metrics.agreement import rater_label_agreement
from metrics.judges import average_accuracy, judge_task_stats
from metrics.judges_extra import (
    PREFERRED_HAS_IMAGE,
    PREFERRED_LACKS_IMAGE,
    image_bias_groups,
    majority_vote_curve,
    pair_counts_interval,
)

MAJORITY_KS = (1, 3, 5, 7, 9)
SPLITS = ("same model", "cross model", PREFERRED_HAS_IMAGE, PREFERRED_LACKS_IMAGE)
RESAMPLES = 300  # per judge and task


def _splits(counts: dict, groups: dict) -> list[tuple]:
    """(accuracy, evaluated) on same-model, cross-model, preferred-has-image and
    preferred-lacks-image pairs, in SPLITS order (pairs may belong to two groups)."""
    totals = {group: [0, 0] for group in SPLITS}
    for pair_id, (correct, evaluated) in counts.items():
        for group in groups.get(pair_id, ()):
            totals[group][0] += correct
            totals[group][1] += evaluated
    return [(c / n if n else None, n) for c, n in (totals[g] for g in SPLITS)]


def _majority(verdicts, labels) -> list[tuple]:
    """(accuracy, evaluated) of the majority of the first K samples, for each K."""
    curve = majority_vote_curve(verdicts, labels, MAJORITY_KS)
    return [curve.get(k, (None, 0)) for k in MAJORITY_KS]


def _with_image_flags(pairs):
    """Annotate whether each response's part list holds an image, in SQL (no JSON decoding
    in Python): the serialised list contains `["image",` only for image parts (a quote in a
    text part is escaped)."""
    flags = {}
    for side in ("a", "b"):
        text = Cast(f"response_{side}__content", output_field=TextField())
        pairs = pairs.alias(**{f"{side}_text": text})
        flags[f"{side}_image"] = ExpressionWrapper(
            Q(**{f"{side}_text__contains": '["image",'}), output_field=BooleanField()
        )
    return pairs.annotate(**flags)


def judge_figures(project: Project) -> dict:
    tasks = list(project.tasks.order_by("slug"))
    labels: dict = defaultdict(dict)
    same_model, image_sides = {}, {}
    kept = Pair.objects.filter(project=project, status=Pair.Status.KEPT, label__in=["A", "B"])
    rows = _with_image_flags(kept)
    for pair_id, task_id, label, same, a_image, b_image in rows.values_list(
        "id", "task_id", "label", "same_model", "a_image", "b_image"
    ):
        labels[task_id][pair_id] = label
        same_model[pair_id] = "same model" if same else "cross model"
        image_sides[pair_id] = (a_image, b_image)
    all_labels = {p: side for by_task in labels.values() for p, side in by_task.items()}
    image_groups = image_bias_groups(image_sides, all_labels)
    groups = {p: (same_model[p], image_groups[p]) if p in image_groups else (same_model[p],)
              for p in same_model}  # fmt: skip

    # Only verdicts on evaluated pairs count (the others never enter a figure); the samples
    # each judge was asked for are read over all its verdicts, as the report does.
    verdicts: dict = defaultdict(lambda: defaultdict(list))
    task_of = {pair_id: task_id for task_id, by_pair in labels.items() for pair_id in by_pair}
    for judge_id, pair_id, order, sample, choice in Verdict.objects.filter(
        pair__in=kept
    ).values_list("judge_id", "pair_id", "order", "sample", "choice"):
        verdicts[judge_id][task_of[pair_id]].append((pair_id, order, sample, choice))
    samples = dict(
        Verdict.objects.filter(pair__project=project)
        .values("judge")
        .annotate(n=Max("sample") + 1)
        .values_list("judge", "n")
    )
    for judge_id in samples:  # a judge with verdicts only on other pairs still gets a row
        verdicts.setdefault(judge_id, defaultdict(list))
    names = dict(Judge.objects.filter(pk__in=samples).values_list("pk", "name"))

    human: dict = defaultdict(lambda: defaultdict(list))
    for task_id, pair_id, overall in Rating.objects.filter(pair__project=project).values_list(
        "pair__task_id", "pair_id", "overall"
    ):
        human[task_id][pair_id].append(overall)

    table = []
    for judge_id in sorted(verdicts, key=lambda j: names[j]):
        cells, everything = [], []
        counts: dict = {}  # pair -> [correct, evaluated], filled by judge_task_stats
        for task in tasks:
            rows = verdicts[judge_id].get(task.pk, [])
            if samples[judge_id] > 1:  # the majority curve needs them all together
                everything += rows
            if not rows:
                cells.append(None)
                continue
            stats = judge_task_stats(rows, labels[task.pk], samples[judge_id], counts)
            cells.append(
                {
                    **stats.as_dict(),
                    "interval": pair_counts_interval(
                        {p: counts[p] for p in labels[task.pk] if p in counts}, resamples=RESAMPLES
                    ),
                }
            )
        average = average_accuracy(cell["accuracy"] for cell in cells if cell)
        table.append(
            {
                "judge": names[judge_id],
                "cells": cells,
                "average": average,
                "samples": samples[judge_id],
                "splits": _splits(counts, groups),
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
