"""`project_report`: the figures of `report --json` (docs/architecture.md §7), read in a fixed
number of queries whatever the size of the project."""

from collections import defaultdict

from django.db.models import Count

from annotation.models import AspectScore, Pair, Project, Rating
from judging.models import Verdict
from metrics.agreement import krippendorff_alpha, rater_label_agreement, unanimous_direction
from metrics.judges import average_accuracy, judge_task_stats

_PENDING = {"candidate", "queued", "in_progress", "complete"}


def _rounded(value):
    return round(value, 6) if isinstance(value, float) else value


def _agreement(scores_by_pair: dict, labels: dict, project: Project) -> dict:
    units = list(scores_by_pair.values())
    return {
        "alpha_ordinal": _rounded(krippendorff_alpha(units, project.scale_points, "ordinal")),
        "alpha_interval": _rounded(krippendorff_alpha(units, project.scale_points, "interval")),
        "unanimous_direction": _rounded(
            unanimous_direction(units, project.center, project.annotators_per_pair)
        ),
        "rater_label_agreement": _rounded(
            rater_label_agreement(scores_by_pair, labels, project.center)
        ),
        "ratings": sum(len(unit) for unit in units),
        "rated_pairs": len(units),
    }


def _aspect_agreement(project: Project) -> dict:
    scores: dict = defaultdict(lambda: defaultdict(lambda: defaultdict(list)))
    rows = AspectScore.objects.filter(rating__pair__project=project).values_list(
        "rating__pair__task_id", "aspect", "rating__pair_id", "score"
    )
    for task_id, aspect, pair_id, score in rows:
        scores[task_id][aspect][pair_id].append(score)
    return {
        task_id: {
            aspect: {
                "alpha_ordinal": _rounded(
                    krippendorff_alpha(by_pair.values(), project.scale_points, "ordinal")
                ),
                "alpha_interval": _rounded(
                    krippendorff_alpha(by_pair.values(), project.scale_points, "interval")
                ),
                "ratings": sum(len(v) for v in by_pair.values()),
            }
            for aspect, by_pair in aspects.items()
        }
        for task_id, aspects in scores.items()
    }


def _labels_and_scores(project: Project) -> tuple[dict, dict]:
    """Per task: the labels of the evaluated pairs (kept, with a side label: what humans and
    judges are scored against) and every pair's overall scores."""
    labels: dict = defaultdict(dict)
    kept = Pair.objects.filter(project=project, status=Pair.Status.KEPT, label__in=["A", "B"])
    for pair_id, task_id, label in kept.values_list("id", "task_id", "label"):
        labels[task_id][pair_id] = label

    scores: dict = defaultdict(lambda: defaultdict(list))
    ratings = Rating.objects.filter(pair__project=project).values_list(
        "pair__task_id", "pair_id", "overall"
    )
    for task_id, pair_id, overall in ratings:
        scores[task_id][pair_id].append(overall)
    return labels, scores


def _task_agreement(task_id: int, labels: dict, scores: dict, aspects: dict, project) -> dict:
    return {
        **_agreement(scores[task_id], labels[task_id], project),
        "aspects": aspects.get(task_id, {}),
    }


def project_agreement(project: Project) -> dict:
    """{task slug: the task's `agreement` of `report --json`}, without reading any verdict
    (the dataset export's manifest)."""
    labels, scores = _labels_and_scores(project)
    aspects = _aspect_agreement(project)
    return {
        task.slug: _task_agreement(task.id, labels, scores, aspects, project)
        for task in project.tasks.order_by("slug")
    }


def project_report(project: Project) -> dict:
    tasks = list(project.tasks.order_by("slug"))
    status_counts: dict = defaultdict(dict)
    rows = Pair.objects.filter(project=project).values_list("task_id", "status")
    for task_id, status, count in rows.annotate(n=Count("id")).order_by():
        status_counts[task_id][status] = count

    labels, scores = _labels_and_scores(project)

    verdicts: dict = defaultdict(lambda: defaultdict(list))
    samples: dict = defaultdict(int)  # samples per order each judge was asked for
    verdict_rows = Verdict.objects.filter(pair__project=project).values_list(
        "judge__name", "pair__task_id", "pair_id", "order", "sample", "choice"
    )
    for judge, task_id, pair_id, order, sample, choice in verdict_rows:
        verdicts[judge][task_id].append((pair_id, order, sample, choice))
        samples[judge] = max(samples[judge], sample + 1)
    aspects = _aspect_agreement(project)

    report_tasks = {}
    judge_accuracies: dict = defaultdict(list)
    for task in tasks:
        counts = status_counts.get(task.id, {})
        judges = {}
        for judge in sorted(verdicts):
            if task.id not in verdicts[judge]:
                continue
            stats = judge_task_stats(verdicts[judge][task.id], labels[task.id], samples[judge])
            judges[judge] = {key: _rounded(value) for key, value in stats.as_dict().items()}
            judge_accuracies[judge].append(stats.accuracy)
        report_tasks[task.slug] = {
            "kind": task.kind,
            "pairs": sum(counts.values()),
            "kept": counts.get("kept", 0),
            "dropped": counts.get("dropped", 0),
            "easy": counts.get("easy", 0),
            "pending": sum(n for status, n in counts.items() if status in _PENDING),
            "statuses": counts,
            "agreement": _task_agreement(task.id, labels, scores, aspects, project),
            "judges": judges,
        }
    return {
        "project": project.slug,
        "scale_points": project.scale_points,
        "annotators_per_pair": project.annotators_per_pair,
        "tasks": report_tasks,
        "judges": {
            judge: {"average": _rounded(average_accuracy(accuracies)), "tasks": len(accuracies)}
            for judge, accuracies in sorted(judge_accuracies.items())
        },
    }
