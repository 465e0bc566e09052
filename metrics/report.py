"""`project_report`: the figures of `report --json` (docs/architecture.md §7), read in a fixed
number of queries whatever the size of the project."""

from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count
from django.utils import translation

from content.models import Pair
from metrics.agreement import krippendorff_alpha, rater_label_agreement, unanimous_direction
from metrics.annotator_quality import task_annotator_quality
from metrics.bias_cards import task_bias_cards
from metrics.group_bias import group_bias
from metrics.inputs import (
    JudgeInputs,
    Labels,
    Scores,
    annotator_ratings,
    aspect_scores,
    group_scores,
    judge_inputs,
    kept_labels,
    overall_scores,
    pool_design,
    pool_votes,
)
from metrics.judge_accuracy import (
    JudgeTaskStats,
    average_accuracy,
    judge_task_stats,
    tasks_covered,
)
from metrics.judge_ppi import average_over_tasks, counted_pairs, sample_progress, task_figures
from metrics.rounding import rounded
from projects.models import Project

_PENDING = {"candidate", "queued", "in_progress", "complete"}

Figures = dict[str, Any]  # a JSON object of `report --json`
AspectAgreement = dict[int, dict[str, Figures]]  # task -> aspect key -> figures


def _agreement(
    scores_by_pair: Mapping[int, list[int]], labels: Mapping[int, str], project: Project
) -> Figures:
    units = list(scores_by_pair.values())
    return {
        "alpha_ordinal": rounded(krippendorff_alpha(units, project.scale_points, "ordinal")),
        "alpha_interval": rounded(krippendorff_alpha(units, project.scale_points, "interval")),
        "unanimous_direction": rounded(
            unanimous_direction(units, project.center, project.annotators_per_pair)
        ),
        "rater_label_agreement": rounded(
            rater_label_agreement(scores_by_pair, labels, project.center)
        ),
        "ratings": sum(len(unit) for unit in units),
        "rated_pairs": len(units),
    }


def _aspect_agreement(project: Project) -> AspectAgreement:
    return {
        task_id: {
            aspect: {
                "alpha_ordinal": rounded(
                    krippendorff_alpha(by_pair.values(), project.scale_points, "ordinal")
                ),
                "alpha_interval": rounded(
                    krippendorff_alpha(by_pair.values(), project.scale_points, "interval")
                ),
                "ratings": sum(len(v) for v in by_pair.values()),
            }
            for aspect, by_pair in aspects.items()
        }
        for task_id, aspects in aspect_scores(project).items()
    }


def _task_agreement(
    task_id: int, labels: Labels, scores: Scores, aspects: AspectAgreement, project: Project
) -> Figures:
    return {
        **_agreement(scores[task_id], labels[task_id], project),
        "aspects": aspects.get(task_id, {}),
    }


def project_agreement(project: Project) -> dict[str, Figures]:
    """{task slug: the task's `agreement` of `report --json`}, without reading any verdict
    (the dataset export's manifest)."""
    labels, scores = kept_labels(project), overall_scores(project)
    aspects = _aspect_agreement(project)
    return {
        task.slug: _task_agreement(task.id, labels, scores, aspects, project)
        for task in project.tasks.order_by("slug")
    }


def _in_english(texts: dict[str, object]) -> dict[str, str]:
    with translation.override("en"):
        return {key: str(text) for key, text in texts.items()}


def project_report(project: Project) -> Figures:
    tasks = list(project.tasks.order_by("slug"))
    status_counts: dict[int, dict[str, int]] = defaultdict(dict)
    statuses = Pair.objects.filter(project=project).values_list("task_id", "status")
    for task_id, status, count in statuses.annotate(n=Count("id")).order_by():
        status_counts[task_id][status] = count

    labels, scores = kept_labels(project), overall_scores(project)
    judged = judge_inputs(project)
    aspects = _aspect_agreement(project)
    ratings = annotator_ratings(project)
    quality = task_annotator_quality(project, tasks, labels, ratings)
    people = {a for figures in quality.values() for a in figures["annotators"]}
    names = dict(get_user_model().objects.filter(pk__in=people).values_list("pk", "username"))
    bias_cards = task_bias_cards(project, tasks, labels, judged, names, ratings)
    group_rows = group_scores(project, judged)
    powered_by_task = powered_figures_by_task(project)

    report_tasks: dict[str, Figures] = {}
    judge_accuracies: dict[str, dict[int, float | None]] = defaultdict(
        dict
    )  # judge -> task -> accuracy
    powered_by_judge: dict[str, dict[int, Figures]] = defaultdict(dict)
    for task in tasks:
        counts = status_counts.get(task.id, {})
        judges: dict[str, Figures] = {}
        powered = powered_by_task[task.id]
        for judge_id, stats in _judge_stats(task.id, judged, labels):
            judge = judged.names[judge_id]
            judges[judge] = {key: rounded(value) for key, value in stats.as_dict().items()}
            judges[judge]["scale"] = judged.scale(judge_id)
            judges[judge]["bias_cards"] = bias_cards[task.id][judge_id]
            if grouped := group_rows[task.id].get(judge_id):
                judges[judge]["bias"] = rounded(group_bias(grouped).as_dict())
            judges[judge]["prediction_powered"] = rounded(powered["judges"].get(judge_id))
            judge_accuracies[judge][task.id] = stats.accuracy
            if judge_id in powered["judges"]:
                powered_by_judge[judge][task.id] = powered["judges"][judge_id]
        report_tasks[task.slug] = {
            "kind": task.kind,
            "pairs": sum(counts.values()),
            "kept": counts.get("kept", 0),
            "dropped": counts.get("dropped", 0),
            "easy": counts.get("easy", 0),
            "gold": counts.get("gold", 0),
            "pending": sum(n for status, n in counts.items() if status in _PENDING),
            "statuses": counts,
            "agreement": _task_agreement(task.id, labels, scores, aspects, project),
            "judges": judges,
            "closest_judges": rounded(_named_closest(powered["closest"], judged.names)),
            "sample": _public_sample(powered.get("sample")),
            "annotators": {
                # The flags' evidence is lazy text (shown on pages in their language): the
                # report, plain JSON, reads it in English.
                names[annotator]: {
                    **figures,
                    "flag_evidence": _in_english(figures["flag_evidence"]),
                }
                for annotator, figures in sorted(
                    quality[task.id]["annotators"].items(), key=lambda item: names[item[0]]
                )
            },
            "competence_consensus": {
                name: {
                    **consensus,  # pairs by their external ids: internal ids stay inside
                    "changes": [
                        {k: v for k, v in change.items() if k != "pair"}
                        for change in consensus["changes"]
                    ],
                }
                for name, consensus in quality[task.id]["competence_consensus"].items()
            },
        }
    return {
        "project": project.slug,
        "scale_points": project.scale_points,
        "annotators_per_pair": project.annotators_per_pair,
        "tasks": report_tasks,
        "target_half_width": project.target_half_width,
        "judges": {
            judge: {
                **_judge_average([accuracies.get(t.id) for t in tasks if labels[t.id]]),
                "prediction_powered": rounded(
                    _powered_average(powered_by_judge[judge], [t.id for t in tasks if labels[t.id]])
                ),
            }
            for judge, accuracies in sorted(judge_accuracies.items())
        },
    }


def _judge_stats(
    task_id: int, judged: JudgeInputs, labels: Labels
) -> Iterator[tuple[int, JudgeTaskStats]]:
    """Each judge that answered on the task, by name, with its rated-only figures there."""
    for judge_id in judged.by_name():
        if task_id in judged.tasks[judge_id]:
            yield (
                judge_id,
                judge_task_stats(
                    judged.rows[judge_id][task_id],
                    labels[task_id],
                    judged.samples[judge_id],
                    orders=judged.orders[judge_id],
                ),
            )


def project_judge_accuracy(project: Project) -> dict[str, dict[str, Figures]]:
    """Per task slug and judge: the accuracy on the rated pairs (MMRB2's protocol) and the
    prediction-powered figure, as in the report; for the export's manifest."""
    labels, judged = kept_labels(project), judge_inputs(project)
    powered_by_task = powered_figures_by_task(project)
    figures: dict[str, dict[str, Figures]] = {}
    for task in project.tasks.order_by("slug"):
        powered = powered_by_task[task.id]
        by_judge = figures[task.slug] = {}
        for judge_id, stats in _judge_stats(task.id, judged, labels):
            by_judge[judged.names[judge_id]] = {
                "accuracy": rounded(stats.accuracy),
                "evaluated": stats.evaluated,
                "prediction_powered": rounded(powered["judges"].get(judge_id)),
            }
    return figures


def powered_task_figures(
    votes: Mapping[int, Mapping[int, tuple[int, int, int]]],
    outcomes: Mapping[int, str | None],
    design: Mapping[int, tuple[float, float, bool]],
    *,
    target: float,
    plan_width: float | None = None,
    sampled: bool = False,
) -> Figures:
    """The prediction-powered figures of one task (metrics/judge_ppi.py), judges by id, from
    metrics/inputs.py::pool_votes and ::pool_design; weighted back by the design when the
    project rates a sample."""
    shares = {
        judge_id: {
            pair: (a / answered, b / answered)
            for pair, (a, b, answered) in by_pair.items()
            if answered
        }
        for judge_id, by_pair in votes.items()
    }
    counted = counted_pairs(design, sampled=sampled)
    figures = task_figures(
        {j: by_pair for j, by_pair in shares.items() if by_pair},
        outcomes,
        target=target,
        plan_width=plan_width,
        counted=counted,
    )
    if sampled:
        figures["sample"] = sample_progress(design, counted)
    return figures


def powered_figures_by_task(
    project: Project, half_width: float | None = None
) -> dict[int, Figures]:
    """`powered_task_figures` of every task of the project, monitored at the project's target
    and planned for it unless another width is given; weighted back by the sample's design
    when it rates a sample."""
    pool = pool_votes(project)
    design, outcomes = pool_design(project)
    sampled = project.rating_mode == Project.RatingMode.SAMPLE
    figures: dict[int, Figures] = defaultdict(lambda: {"judges": {}, "closest": None})
    for task_id, choices in pool.items():  # a task no judge answered has no figure
        figures[task_id] = powered_task_figures(
            choices,
            outcomes[task_id],
            design[task_id],
            target=project.target_half_width,
            plan_width=half_width,
            sampled=sampled,
        )
    _name_waiting_pairs(figures.values())
    return figures


def _name_waiting_pairs(task_figures: Iterable[Figures]) -> None:
    """A sample held back by an open pair names it by its external id too (one query)."""
    waiting = [f["sample"] for f in task_figures if f.get("sample", {}).get("waiting_on")]
    names = dict(
        Pair.objects.filter(pk__in=[s["waiting_on"] for s in waiting]).values_list(
            "pk", "external_id"
        )
    )
    for sample in waiting:
        sample["waiting_on_external_id"] = names.get(sample["waiting_on"])


def _public_sample(sample: Figures | None) -> Figures | None:
    """A sample's progress as the report shows it: pairs by their external ids."""
    if sample is None:
        return None
    return {
        "counted": sample["counted"],
        "rated_after": sample["rated_after"],
        "waiting_on": sample.get("waiting_on_external_id"),
    }


def _named_closest(closest: Figures | None, names: Mapping[int, str]) -> Figures | None:
    if closest is None:
        return None
    return {**closest, "judges": [names[judge_id] for judge_id in closest["judges"]]}


def _powered_average(by_task: Mapping[int, Figures], labelled: list[int]) -> Figures | None:
    """The multi-task prediction-powered figure, over the labelled tasks, only when the judge
    has one on each (as the rated-only average)."""
    if not labelled or any(task_id not in by_task for task_id in labelled):
        return None
    return average_over_tasks([by_task[task_id] for task_id in labelled])


def _judge_average(accuracies: list[float | None]) -> Figures:
    """The multi-task figure over the tasks with labelled pairs: `average` only when the judge
    has a figure on each of them, `tasks` of `labelled_tasks` saying how many it has."""
    return {
        "average": rounded(average_accuracy(accuracies)),
        "tasks": tasks_covered(accuracies),
        "labelled_tasks": len(accuracies),
    }
