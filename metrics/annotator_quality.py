"""Each annotator's quality figures per task, in one place for `report --json` and
the agreement page: ratings, gold accuracy with its interval, speed and pattern flags with
their evidence, MACE and Dawid–Skene competence, whether gold checks paused them, and their
qualification result."""

from collections.abc import Mapping
from typing import Any

from annotation.models import AnnotatorPause, Qualification
from metrics.annotator_flags import annotator_flags, wilson_interval
from metrics.competence import CompetenceResult, dawid_skene, mace
from metrics.inputs import (
    AnnotatorRatings,
    Labels,
    annotator_ratings,
    decided_pairs,
    gold_answers,
)
from metrics.rounding import rounded
from projects.models import Project, Task
from projects.scale import center, side_of, to_canonical


def _side_label(overall: int, scale: int) -> str:
    return side_of(overall, center(scale)) or "tie"


# A dropped pair counts as one the weighting would decide when its weighted label is a side
# with at least this posterior: the rules dropped it for a spread or an ambiguous mean, which
# a vote that trusts the reliable annotators more may settle.
DECIDED_POSTERIOR = 0.95
CHANGES_LISTED = 20


def competence_consensus(
    result: CompetenceResult,
    kept: Mapping[int, str],
    decided: Mapping[int, tuple[str, str]],
    pair_ids: set[int],
) -> dict[str, Any]:
    """How the competence-weighted label compares with the decision in force: kept pairs it
    would label otherwise (or call a tie), dropped pairs it would decide, among those it saw;
    `changes` lists the first of both (pair id, external id, decision, weighted label, its
    posterior) for the agreement page."""
    compared = sorted(pid for pid in kept if pid in pair_ids)
    changed = [pid for pid in compared if result.labels.get(pid) != kept[pid]]
    dropped = sorted(
        pid for pid, (_eid, status) in decided.items() if status == "dropped" and pid in pair_ids
    )
    settled = [
        pid
        for pid in dropped
        if result.labels.get(pid) in ("A", "B")
        and result.posteriors[pid][result.labels[pid]] >= DECIDED_POSTERIOR
    ]
    changes = [
        {
            "pair": pid,
            "external_id": decided.get(pid, ("?", ""))[0],
            "decision": f"kept {kept[pid]}" if pid in kept else "dropped",
            "weighted": result.labels.get(pid),
            "posterior": rounded(result.posteriors[pid][result.labels[pid]]),
        }
        for pid in sorted(changed + settled)[:CHANGES_LISTED]
    ]
    return {
        "kept_compared": len(compared),
        "kept_changed": len(changed),
        "dropped_compared": len(dropped),
        "dropped_decided": len(settled),
        "changes": changes,
    }


def task_annotator_quality(
    project: Project, tasks: list[Task], labels: Labels, ratings: AnnotatorRatings | None = None
) -> dict[int, dict[str, Any]]:
    """{task id: {"annotators": {annotator id: figures}, "competence_consensus": {...}}} for
    these tasks of the project; `labels` is metrics.inputs.kept_labels, `ratings`
    metrics.inputs.annotator_ratings when the caller read it (four queries, or three)."""
    ratings = annotator_ratings(project) if ratings is None else ratings
    gold = gold_answers(project)
    decided = decided_pairs(project)
    paused = set(
        AnnotatorPause.objects.filter(
            task__project=project, readmitted_at__isnull=True
        ).values_list("task_id", "annotator_id")
    )
    qualified = {
        (task_id, annotator): {
            "correct": correct,
            "answered": answered,
            "passed": passed,
            "admitted_by_lead": admitted_by is not None,
        }
        for task_id, annotator, correct, answered, passed, admitted_by in (
            Qualification.objects.filter(task__project=project).values_list(
                "task_id", "annotator_id", "correct", "answered", "passed", "admitted_by"
            )
        )
    }
    out: dict[int, dict[str, Any]] = {}
    for task in tasks:
        by_annotator = ratings.get(task.pk, {})
        sides = [
            (annotator, pair_id, _side_label(overall, scale))
            for annotator, rows in by_annotator.items()
            for pair_id, overall, scale, _swapped, _seconds in rows
        ]
        models = {"mace": mace(sides), "dawid_skene": dawid_skene(sides)} if sides else {}
        pair_ids = {pair_id for _a, pair_id, _label in sides}
        annotators = {}
        people = set(by_annotator) | set(gold.get(task.pk, {}))
        people |= {annotator for task_id, annotator in qualified if task_id == task.pk}
        for annotator in sorted(people):
            rows = by_annotator.get(annotator, [])
            shown = [
                (to_canonical(overall, scale, swapped), seconds)  # the key they pressed
                for _pair, overall, scale, swapped, seconds in rows
            ]
            flags = annotator_flags(shown, project.scale_points, task.min_active_seconds)
            answers = gold.get(task.pk, {}).get(annotator, [])
            correct = sum(answers)
            interval = wilson_interval(correct, len(answers))
            annotators[annotator] = {
                "ratings": len(rows),
                "gold": {
                    "accuracy": rounded(correct / len(answers)) if answers else None,
                    "n": len(answers),
                    "interval": [rounded(bound) for bound in interval] if interval else None,
                    "below_threshold": bool(answers)
                    and len(answers) >= task.gold_min_answers
                    and correct / len(answers) < task.gold_min_accuracy,
                },
                "flags": flags.names,
                "flag_evidence": {flag.name: flag.evidence for flag in flags.flags},
                "competence": {
                    name: rounded(result.competence.get(annotator))
                    for name, result in models.items()
                },
                "paused": (task.pk, annotator) in paused,
                "qualification": qualified.get((task.pk, annotator)),
            }
        out[task.pk] = {
            "annotators": annotators,
            "competence_consensus": {
                name: competence_consensus(
                    result, labels.get(task.pk, {}), decided.get(task.pk, {}), pair_ids
                )
                for name, result in models.items()
            },
        }
    return out
