"""`export_dataset`: a project's consensus dataset written to a folder (docs/export-format.md).

The export is written into a hidden sibling folder and renamed into place at the end: a failed
export leaves nothing behind, and a reader never sees half a dataset."""

import os
import secrets
import shutil
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from itertools import chain
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from django.utils.translation import gettext as _

from content.models import Pair
from exports.errors import ExportInvalid
from exports.images import ImageBytes, ImageFiles
from exports.jsonl import JsonlTaskWriter
from exports.judge_labels import judge_labels
from exports.manifest import agreement, judge_accuracy, manifest, task_file, write_manifest
from exports.mmrb2 import Mmrb2TaskWriter
from exports.rows import RowBatch, judge_labelled_batches, task_batches
from exports.sink import FileLedger
from projects.models import Project, Task

if TYPE_CHECKING:
    from exports.preference import CleanImageBytes

FILE_FORMATS = ("jsonl", "parquet", "mmrb2", "preference")
# Formats whose files hold only kept pairs with the experts' side (never judge labels).
_EXPERTS_ONLY = ("mmrb2", "preference")


@dataclass
class ExportSummary:
    project: str
    file_format: str
    out: str
    pairs: int = 0
    ratings: int = 0
    images: int = 0
    files: int = 0  # manifest.json included
    seconds: float = 0.0
    tasks: dict[str, Any] = field(default_factory=dict)  # slug → {"pairs": n, "ratings": n}

    def as_dict(self) -> dict[str, Any]:
        return {
            "project": self.project,
            "format": self.file_format,
            "out": self.out,
            "pairs": self.pairs,
            "ratings": self.ratings,
            "images": self.images,
            "files": self.files,
            "seconds": round(self.seconds, 2),
            "tasks": self.tasks,
        }


def export_dataset(
    project: Project,
    out_dir: Path | str,
    *,
    file_format: str = "jsonl",
    task_slug: str | None = None,
    include_dropped: bool = False,
    with_verdicts: bool = False,
    include_archived: bool = True,
) -> ExportSummary:
    """Write the project's kept pairs (and dropped ones with `include_dropped`) of every task
    (archived ones too unless `include_archived` is False), or of `task_slug` only, into
    `out_dir`, which must be absent or empty."""
    started = time.perf_counter()
    tasks = export_tasks(project, file_format, task_slug, include_archived=include_archived)
    target = Path(os.path.abspath(out_dir))
    _check_target(target)
    staging = target.parent / f".{target.name}.partial-{secrets.token_hex(4)}"
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        staging.mkdir()
    except OSError as exc:
        raise ExportInvalid(f"cannot write beside {target}: {exc.strerror}") from None
    try:
        options = {
            "task": task_slug or None,
            "include_dropped": include_dropped,
            "with_verdicts": with_verdicts,
        }
        summary = _write(project, tasks, staging, file_format, options)
        _publish(staging, target)
    except BaseException:
        shutil.rmtree(staging, ignore_errors=True)
        raise
    summary.out = str(target)
    summary.seconds = time.perf_counter() - started
    return summary


def export_tasks(
    project: Project, file_format: str, task_slug: str | None, *, include_archived: bool = True
) -> list[Task]:
    """The tasks an export with these options writes; ExportInvalid for a bad format or task
    (also used to refuse an export job before it is queued). Archived tasks keep their data
    and are exported unless `include_archived` is False; a task named explicitly always is."""
    if file_format not in FILE_FORMATS:
        raise ExportInvalid(
            _("unknown format %(format)r; expected one of %(formats)s")
            % {"format": file_format, "formats": ", ".join(FILE_FORMATS)}
        )
    tasks = Task.objects.filter(project=project).order_by("slug")
    if task_slug:
        tasks = tasks.filter(slug=task_slug)
    elif not include_archived:
        tasks = tasks.active()
    found = list(tasks)
    if task_slug and not found:
        raise ExportInvalid(
            _("project %(project)r has no task %(task)r")
            % {"project": project.slug, "task": task_slug}
        )
    if file_format == "mmrb2" and any(task.slug == "manifest" for task in found):
        # Its manifest.json would be overwritten by the export's manifest.
        raise ExportInvalid(_("a task named 'manifest' cannot be exported as MMRB2 files"))
    return found


def _nothing_to_export(tasks: list[Task], include_dropped: bool) -> str:
    names = ", ".join(task.name for task in tasks) or _("the project")
    if include_dropped:
        return _(
            "nothing to export: %(tasks)s has no kept or dropped pairs yet; pairs are "
            "exported once the experts' ratings (or a lead) decide them"
        ) % {"tasks": names}
    return _(
        "nothing to export: %(tasks)s has no kept pairs yet; pairs are exported once the "
        "experts' ratings (or a lead) keep them"
    ) % {"tasks": names}


def export_has_pairs_check(
    project: Project, tasks: list[Task], file_format: str, *, include_dropped: bool
) -> None:
    """ExportInvalid, before a job is queued, when the export of one task could hold no
    pair: it has no kept pair (or dropped one, when included). One query. Judge labels may
    add undecided pairs: those exports are checked only once written. A whole project's
    export is never refused (an export started while the experts work is a snapshot: its
    manifest lists each task, an empty one with 0 pairs and no file)."""
    if project.judge_labels and file_format not in _EXPERTS_ONLY:
        return
    with_dropped = include_dropped and file_format not in _EXPERTS_ONLY
    statuses = [Pair.Status.KEPT, *([Pair.Status.DROPPED] if with_dropped else [])]
    if not Pair.objects.filter(task__in=tasks, status__in=statuses).exists():
        raise ExportInvalid(_nothing_to_export(tasks, include_dropped))


def _check_target(target: Path) -> None:
    if target.exists() and not target.is_dir():
        raise ExportInvalid(f"{target} exists and is not a folder")
    if target.is_dir() and any(target.iterdir()):
        raise ExportInvalid(f"{target} is not empty; export into a new or empty folder")


def _publish(staging: Path, target: Path) -> None:
    try:
        if target.exists():
            target.rmdir()  # empty, as checked; fails if something appeared meanwhile
        os.rename(staging, target)
    except OSError as exc:
        raise ExportInvalid(f"cannot move the export into {target}: {exc.strerror}") from None


class TaskWriter(Protocol):
    """One task's file of an export, written a batch of rows at a time."""

    def write(self, batch: RowBatch) -> None: ...
    def close(self) -> None: ...
    def abort(self) -> None: ...


def _writers(
    ledger: FileLedger, file_format: str
) -> tuple["ImageFiles | ImageBytes | CleanImageBytes", Callable[[str], TaskWriter]]:
    """The format's images and what makes the writer of one task's file (given its path)."""
    if file_format in ("jsonl", "mmrb2"):
        files = ImageFiles(ledger)
        if file_format == "jsonl":
            return files, lambda relative: JsonlTaskWriter(ledger, relative, files)
        return files, lambda relative: Mmrb2TaskWriter(ledger, relative, files)
    # pyarrow costs some 60 MB: only processes that write Parquet load it.
    from exports.parquet import ParquetTaskWriter

    if file_format == "preference":
        from exports.preference import CleanImageBytes, PreferenceTaskWriter

        clean = CleanImageBytes()
        return clean, lambda relative: PreferenceTaskWriter(ledger, relative, clean)

    blobs = ImageBytes()
    return blobs, lambda relative: ParquetTaskWriter(ledger, relative, blobs)


def _write(
    project: Project, tasks: list[Task], staging: Path, file_format: str, options: dict[str, Any]
) -> ExportSummary:
    ledger = FileLedger(staging)
    try:
        images, new_writer = _writers(ledger, file_format)
        summary = ExportSummary(project=project.slug, file_format=file_format, out="")
        tally: dict[str, Any] = {"by_status": Counter(), "by_decided_by": Counter()}
        if file_format in _EXPERTS_ONLY:
            # Pairs without a side are left out of these files and counted here.
            tally["left_out"] = Counter()
        left_out_ids: dict[str, dict[str, Any]] = {}  # preference: task -> reason -> pair ids
        for task in tasks:
            relative = task_file(task.slug, file_format)
            writer = new_writer(relative)
            try:
                counts = _write_task(project, task, writer, file_format, options, tally)
            except BaseException:
                writer.abort()
                raise
            if counts["pairs"]:
                writer.close()
            else:  # no empty file: the manifest lists the task with 0 pairs and no file
                writer.abort()
                (staging / relative).unlink(missing_ok=True)
            if isinstance(writer, Mmrb2TaskWriter):
                counts["left_out"] = dict(sorted(writer.left_out.items()))
                tally["left_out"].update(writer.left_out)
            elif file_format == "preference":
                left_out_ids[task.slug] = writer.left_out(task)  # type: ignore[attr-defined]
                counts["left_out"] = {k: len(ids) for k, ids in left_out_ids[task.slug].items()}
                tally["left_out"].update(counts["left_out"])
            summary.tasks[task.slug] = counts
            summary.pairs += counts["pairs"]
            summary.ratings += counts["ratings"]
        if not summary.pairs and options["task"]:  # a whole project's says so in its manifest
            raise ExportInvalid(_nothing_to_export(tasks, options["include_dropped"]))
        summary.images = images.count
        judge_label_figures = tally.pop("judge_labels", {})
        content = manifest(
            project,
            tasks,
            file_format=file_format,
            options=options,
            task_pairs={slug: counts["pairs"] for slug, counts in summary.tasks.items()},
            counts={
                "pairs": summary.pairs,
                "ratings": summary.ratings,
                "images": summary.images,
                **{key: dict(sorted(counter.items())) for key, counter in tally.items()},
            },
            agreement_figures=agreement(project, tasks),
            judge_figures=judge_accuracy(project, tasks),
            judge_label_figures=judge_label_figures,
        )
        if file_format == "preference":
            content["left_out"] = left_out_ids
        write_manifest(staging, content, ledger.entries())
        summary.files = ledger.count + 1
        return summary
    finally:
        ledger.close()


def _write_task(
    project: Project,
    task: Task,
    writer: Any,
    file_format: str,
    options: dict[str, Any],
    tally: dict[str, Any],
) -> dict[str, Any]:
    # MMRB2's files read the dropped pairs too, to count them as left out; the preference
    # files read kept pairs only, and list the others from a query of their ids.
    with_dropped = file_format == "mmrb2" or (
        options["include_dropped"] and file_format != "preference"
    )
    statuses = [Pair.Status.KEPT, *([Pair.Status.DROPPED] if with_dropped else [])]
    keeps = getattr(writer, "keeps", lambda row: True)
    counts = {"pairs": 0, "ratings": 0}
    batches = task_batches(project, task, statuses, with_verdicts=options["with_verdicts"])
    judge_labelled = _judge_labelled(project, task, file_format, options, tally)
    for batch in chain(batches, judge_labelled):
        writer.write(batch)
        for row in filter(keeps, batch.rows):
            counts["pairs"] += 1
            counts["ratings"] += len(row["ratings"])
            tally["by_status"][row["status"]] += 1
            tally["by_decided_by"][row["decided_by"]] += 1
    return counts


def _judge_labelled(
    project: Project, task: Task, file_format: str, options: dict[str, Any], tally: dict[str, Any]
) -> Iterator[RowBatch]:
    """The undecided pairs the judges may label with the project's guarantee, labelled, and
    the calibration in the manifest (never in MMRB2's or the preference files: experts' labels
    only)."""
    if not project.judge_labels or file_format in _EXPERTS_ONLY:
        return
    plan = judge_labels(project, task)
    tally.setdefault("judge_labels", {})[task.slug] = plan.manifest()
    yield from judge_labelled_batches(
        project, task, plan.labels, plan.source(), with_verdicts=options["with_verdicts"]
    )
