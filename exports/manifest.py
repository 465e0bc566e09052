"""manifest.json: what was exported, with which options, and the checksum of every file."""

import json
import math
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from django.utils import timezone

from metrics.report import project_agreement, project_judge_accuracy
from projects.models import Project, Task

FORMAT_NAME = "arbiter-dataset"
VERSION = 1


def _finite(value: Any) -> Any:
    """JSON has no NaN or infinity: such figures are written as null."""
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, dict):
        return {key: _finite(item) for key, item in value.items()}
    if isinstance(value, list | tuple):
        return [_finite(item) for item in value]
    return value


def agreement(project: Project, tasks: list[Task]) -> dict[str, Any]:
    """The agreement figures of `report --json` for each exported task."""
    figures = project_agreement(project)
    return {task.slug: _finite(figures.get(task.slug)) for task in tasks}


def judge_accuracy(project: Project, tasks: list[Task]) -> dict[str, Any]:
    """Each judge's accuracy on each exported task, rated-only and prediction-powered, as in
    `report --json`."""
    figures = project_judge_accuracy(project)
    return {task.slug: _finite(figures.get(task.slug, {})) for task in tasks}


def task_file(slug: str, file_format: str) -> str:
    """The file of one task in an export: `<task>.jsonl`, `<task>.parquet` (the preference
    format's too), or MMRB2's `<task>.json`."""
    suffix = {"mmrb2": "json", "preference": "parquet"}.get(file_format, file_format)
    return f"{slug}.{suffix}"


def manifest(
    project: Project,
    tasks: list[Task],
    *,
    file_format: str,
    options: dict[str, Any],
    task_pairs: dict[str, int],
    counts: dict[str, Any],
    agreement_figures: dict[str, Any],
    judge_figures: dict[str, Any],
    judge_label_figures: dict[str, Any],
) -> dict[str, Any]:
    """Everything but "files", which `write_manifest` streams in at the end."""
    return {
        "format": FORMAT_NAME,
        "version": VERSION,
        "created_at": timezone.now().isoformat(),
        "file_format": file_format,
        "options": options,
        "project": {
            "slug": project.slug,
            "name": project.name,
            "scale_points": project.scale_points,
            "annotators_per_pair": project.annotators_per_pair,
            "max_span": project.max_span,
            "ambiguous_half_width": project.ambiguous_half_width,
            "ensemble_threshold": project.ensemble_threshold,
            "guidelines": project.guidelines,
            "judge_labels": project.judge_labels,
        },
        "tasks": [
            {
                "slug": task.slug,
                "name": task.name,
                "kind": task.kind,
                "aspects": task.aspects,
                "guidelines": task.guidelines,
                "pairs": task_pairs[task.slug],
                # A task with nothing to export has no file (never an empty one).
                "file": task_file(task.slug, file_format) if task_pairs[task.slug] else None,
            }
            for task in tasks
        ],
        "counts": counts,
        "agreement": agreement_figures,
        "judge_accuracy": judge_figures,
        # Per task, when the project exports judge labels: alpha, delta, the calibration set's
        # size, the threshold, the coverage reached and how many pairs the judges labelled.
        "judge_labels": _finite(judge_label_figures),
    }


def write_manifest(
    folder: Path, content: dict[str, Any], files: Iterable[tuple[str, dict[str, Any]]]
) -> None:
    """manifest.json: `content` with "files" last, one line per file, written as the entries
    come (there may be millions)."""
    head = json.dumps(content, ensure_ascii=False, indent=2, allow_nan=False)
    with open(folder / "manifest.json", "w", encoding="utf-8") as out:
        out.write(head.removesuffix("\n}") + ',\n  "files": {')
        separator = "\n    "
        for relative, entry in files:
            out.write(f"{separator}{json.dumps(relative)}: {json.dumps(entry)}")
            separator = ",\n    "
        out.write("\n  }\n}\n")
