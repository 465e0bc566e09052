"""`verdicts_import`: MMRB2 prediction files into a judge's verdicts, all or nothing.

File shape: `{PAIR_ID: {"forward": [{"judgement": "A"|"B"|...}, ...], "reverse": [...]}}`.
The i-th entry of a list is sample i. `reverse` verdicts were given with B shown first, so
their letter is flipped to canonical. A letter other than A/B (or a tie word) is `invalid`;
an empty or missing judgement is a failed call: stored with an error, counted as missing.
Re-importing overwrites the same (judge, pair, order, sample) verdicts, never duplicates them.

`strict_mmrb2` reads exactly as MMRB2's `compute_accuracy.py` scores (README, "Prediction
files"): the first sample of each order only; "A" and "B" as written (no case folding, no
whitespace stripped), any other truthy judgement a wrong answer (`invalid`), a falsy one (empty,
null, 0, false) not counted (a failed call); ids the project does not know are skipped, as the
scorer never looks at them.

Hostile files: the file is refused unread above ARBITER_VERDICT_FILE_MAX_BYTES, then read one
pair at a time, each pair's entry measured before it is parsed and refused above
ARBITER_VERDICT_MAX_RECORD_BYTES (judging/prediction_records.py): that, an id given twice,
more than MAX_SAMPLES samples of one order, or a number that is not finite refuse it, naming
the record. The judge is the project's own (judge_get_or_create_external), never the
operator's.
"""

import json
import math
import time
from pathlib import Path

from django.conf import settings
from django.db import transaction
from django.utils import timezone

from content.importing.errors import ImportFailed, require_storable_text
from content.importing.json_stream import require_file_size
from content.models import Pair
from core.errors import Invalid
from judging.models import API_BACKENDS, MAX_SAMPLES, JudgeRun, Verdict
from judging.prediction_records import prediction_object_records
from judging.services.judges import judge_get_or_create_external
from projects.models import Project, Task
from projects.scale import OTHER_SIDE, canonical_side

_TIE_WORDS = {"TIE", "SAME", "EQUAL", "BOTH", "NEITHER"}
_ORDERS = ("forward", "reverse")


def canonical_choice(judgement: object, order: str) -> tuple[str | None, str]:
    """(choice, error) for one judgement as written in the file."""
    if judgement is None or (isinstance(judgement, str) and not judgement.strip()):
        return None, "empty judgement in the prediction file"
    letter = str(judgement).strip().upper()
    if letter in OTHER_SIDE:
        return canonical_side(letter, order == "reverse"), ""
    if letter in _TIE_WORDS:
        return Verdict.Choice.TIE, ""
    return Verdict.Choice.INVALID, ""


def strict_choice(judgement: object, order: str) -> tuple[str | None, str]:
    """(choice, error) as MMRB2's scorer reads a judgement: exact letters, truthiness."""
    if not judgement:
        return None, "falsy judgement: MMRB2's scorer does not count it"
    if isinstance(judgement, str) and judgement in OTHER_SIDE:
        return canonical_side(judgement, order == "reverse"), ""
    return Verdict.Choice.INVALID, ""


def import_target(project_slug: str, task_slug: str) -> tuple[Project, Task]:
    project = Project.objects.filter(slug=project_slug).first()
    if project is None:
        raise ImportFailed(f"project {project_slug!r} does not exist; import its pairs first")
    task = Task.objects.filter(project=project, slug=task_slug).first()
    if task is None:
        raise ImportFailed(f"task {task_slug!r} does not exist in project {project_slug!r}")
    return project, task


def verdicts_import(
    path: Path | str,
    *,
    project_slug: str,
    task_slug: str,
    judge_name: str,
    strict_mmrb2: bool = False,
) -> dict:
    """Read the file one pair at a time (its memory is that of the largest pair's entry, at
    most ARBITER_VERDICT_MAX_RECORD_BYTES, plus the verdicts kept, at most MAX_SAMPLES per
    order for each pair of the task)."""
    started = time.perf_counter()
    path = Path(path)
    require_verdict_file_size(path)
    project, task = import_target(project_slug, task_slug)
    known = _known_pairs(project)
    read = strict_choice if strict_mmrb2 else canonical_choice

    rows: list[Verdict] = []
    imported: dict[str, int] = {}  # pair id -> the record number it came in
    skipped = 0
    entries = prediction_object_records(
        path, "an MMRB2 prediction file: {PAIR_ID: {forward, reverse}}"
    )
    for number, external_id, entry in entries:
        require_storable_text({external_id: entry}, number)  # before any query sees the id
        pair_id, task_id = known.get(external_id, (None, None))
        if strict_mmrb2 and task_id != task.id:
            skipped += 1  # MMRB2's scorer reads only the ids of the task's benchmark file
            continue
        if pair_id is None:
            raise ImportFailed(
                f"pair id {external_id!r} is unknown to project {project.slug!r}", number
            )
        if task_id != task.id:
            raise ImportFailed(f"pair id {external_id!r} is not in task {task.slug!r}", number)
        if external_id in imported:
            raise ImportFailed(
                f"pair id {external_id!r} appears twice (first as record {imported[external_id]})",
                number,
            )
        imported[external_id] = number
        rows.extend(_entry_verdicts(external_id, entry, pair_id, number, read, strict_mmrb2))
    if not imported and not skipped:
        raise ImportFailed("expected an MMRB2 prediction file: {PAIR_ID: {forward, reverse}}")

    judge, run = verdicts_store(rows, project, task, judge_name, path.name)
    counts = {choice: 0 for choice in ("A", "B", "tie", "invalid", "failed")}
    for row in rows:
        counts[row.choice or "failed"] += 1
    return {
        "project": project.slug,
        "task": task.slug,
        "judge": judge.name,
        "pairs": len(imported),
        "verdicts": len(rows),
        "choices": counts,
        "strict_mmrb2": strict_mmrb2,
        "skipped_unknown_ids": skipped,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _entry_verdicts(external_id, entry, pair_id, number, read, strict_mmrb2) -> list[Verdict]:
    if not isinstance(entry, dict):
        raise ImportFailed(f"pair {external_id!r}: expected an object with forward/reverse", number)
    rows = []
    for order in _ORDERS:
        samples = entry.get(order, [])
        if not isinstance(samples, list):
            raise ImportFailed(f"pair {external_id!r}: {order!r} must be a list", number)
        if len(samples) > MAX_SAMPLES and not strict_mmrb2:
            raise ImportFailed(
                f"pair {external_id!r}: {order!r} holds {len(samples)} samples, above "
                f"{MAX_SAMPLES} (a run's most)",
                number,
            )
        for sample, item in enumerate(samples[:1] if strict_mmrb2 else samples):
            if not isinstance(item, dict):
                raise ImportFailed(
                    f"pair {external_id!r}: {order}[{sample}] must be an object with a 'judgement'",
                    number,
                )
            choice, error = read(item.get("judgement"), order)
            rows.append(
                Verdict(
                    pair_id=pair_id,
                    order=order,
                    sample=sample,
                    choice=choice,
                    error=error,
                    raw_output=json.dumps(item, ensure_ascii=False)[:20000],
                )
            )
    return rows


def verdicts_store(
    rows: list[Verdict], project, task, judge_name: str, source: str, pointwise_scale: str = ""
):
    """Store imported verdicts as one finished `import` run of the (external) judge, as
    upserts on the trial: a re-import replaces, never duplicates. Returns (judge, run)."""
    with transaction.atomic():
        try:
            judge = judge_get_or_create_external(judge_name, project)
        except Invalid as invalid:
            raise ImportFailed(f"judge {judge_name[:100]!r}: {invalid.message}") from None
        if judge.backend in API_BACKENDS:
            # Its own calls' verdicts would be overwritten by the file's.
            raise ImportFailed(
                f"judge {judge.name!r} calls an API; import the file under another judge name"
            )
        run = JudgeRun.objects.create(
            judge=judge,
            project=project,
            task=task,
            samples=max((r.sample for r in rows), default=0) + 1,
            status=JudgeRun.Status.FINISHED,
            purpose=JudgeRun.Purpose.IMPORT,
            pointwise_scale=pointwise_scale,
            trials=len(rows),
            source=source[:255],
            finished_at=timezone.now(),
        )
        for row in rows:
            row.judge = judge
            row.run = run
        Verdict.objects.bulk_create(
            rows,
            batch_size=1000,
            update_conflicts=True,
            unique_fields=["judge", "pair", "order", "sample"],
            update_fields=[
                "choice",
                "score_a",
                "score_b",
                "error",
                "raw_output",
                "run",
                "created_at",
            ],
        )
    return judge, run


def finite_number(value) -> float | None:
    """A score read from a file: a JSON number a float holds and that is finite; None for
    anything else (text, null, booleans, NaN, infinities, integers beyond a float)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if math.isfinite(number) else None


def require_verdict_file_size(path: Path) -> None:
    """A prediction or score file above ARBITER_VERDICT_FILE_MAX_BYTES is refused unread."""
    limit = settings.ARBITER_VERDICT_FILE_MAX_BYTES
    require_file_size(path, limit, "ARBITER_VERDICT_FILE_MAX_BYTES")


def _known_pairs(project: Project) -> dict[str, tuple[int, int]]:
    """external id -> (pair id, task id) of the project's pairs: bounded by the project, not
    by the file."""
    rows = Pair.objects.filter(project=project).values_list("external_id", "id", "task_id")
    return {external_id: (pair_id, task_id) for external_id, pair_id, task_id in rows}
