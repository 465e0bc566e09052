"""`verdicts_import`: MMRB2 prediction files into a judge's verdicts, all or nothing.

File shape: `{PAIR_ID: {"forward": [{"judgement": "A"|"B"|...}, ...], "reverse": [...]}}`.
The i-th entry of a list is sample i. `reverse` verdicts were given with B shown first, so
their letter is flipped to canonical. A letter other than A/B (or a tie word) is `invalid`;
an empty or missing judgement is a failed call: stored with an error, counted as missing.
Re-importing overwrites the same (judge, pair, order, sample) verdicts, never duplicates them.
"""

import json
import time
from pathlib import Path

from django.db import transaction
from django.utils import timezone

from annotation.importing.errors import ImportFailed, require_storable_text
from annotation.importing.limits import require_json_depth
from annotation.models import Pair, Project, Task
from annotation.scale import OTHER_SIDE, canonical_side
from judging.models import JudgeRun, Verdict
from judging.services.judges import judge_get_or_create_external

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


def verdicts_import(
    path: Path | str, *, project_slug: str, task_slug: str, judge_name: str
) -> dict:
    started = time.perf_counter()
    path = Path(path)
    predictions = _load(path)
    for number, item in enumerate(predictions.items(), start=1):
        require_storable_text(dict([item]), number)  # before any query sees the ids
    project = Project.objects.filter(slug=project_slug).first()
    if project is None:
        raise ImportFailed(f"project {project_slug!r} does not exist; import its pairs first")
    task = Task.objects.filter(project=project, slug=task_slug).first()
    if task is None:
        raise ImportFailed(f"task {task_slug!r} does not exist in project {project_slug!r}")
    pair_ids = _pair_ids(project, task, predictions)

    rows = []
    for number, (external_id, entry) in enumerate(predictions.items(), start=1):
        if not isinstance(entry, dict):
            raise ImportFailed(
                f"pair {external_id!r}: expected an object with forward/reverse", number
            )
        for order in _ORDERS:
            samples = entry.get(order, [])
            if not isinstance(samples, list):
                raise ImportFailed(f"pair {external_id!r}: {order!r} must be a list", number)
            for sample, item in enumerate(samples):
                if not isinstance(item, dict):
                    raise ImportFailed(
                        f"pair {external_id!r}: {order}[{sample}] must be an object with "
                        f"a 'judgement'",
                        number,
                    )
                judgement = item.get("judgement")
                choice, error = canonical_choice(judgement, order)
                rows.append(
                    Verdict(
                        pair_id=pair_ids[external_id],
                        order=order,
                        sample=sample,
                        choice=choice,
                        error=error,
                        raw_output=json.dumps(item, ensure_ascii=False)[:20000],
                    )
                )

    with transaction.atomic():
        judge = judge_get_or_create_external(judge_name, project)
        run = JudgeRun.objects.create(
            judge=judge,
            project=project,
            task=task,
            samples=max((r.sample for r in rows), default=0) + 1,
            status=JudgeRun.Status.FINISHED,
            purpose=JudgeRun.Purpose.IMPORT,
            trials=len(rows),
            source=path.name,
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
            update_fields=["choice", "error", "raw_output", "run", "created_at"],
        )
    counts = {choice: 0 for choice in ("A", "B", "tie", "invalid", "failed")}
    for row in rows:
        counts[row.choice or "failed"] += 1
    return {
        "project": project.slug,
        "task": task.slug,
        "judge": judge.name,
        "pairs": len(predictions),
        "verdicts": len(rows),
        "choices": counts,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _load(path: Path) -> dict:
    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise ImportFailed(f"cannot read {path}: {exc.strerror}") from None
    except UnicodeDecodeError as exc:
        raise ImportFailed(f"{path.name} is not valid JSON: {exc}") from None
    require_json_depth(text, what=f"{path.name}: ")  # json.loads recurses once per level
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"{path.name} is not valid JSON: {exc}") from None
    if not isinstance(data, dict) or not data:
        raise ImportFailed("expected an MMRB2 prediction file: {PAIR_ID: {forward, reverse}}")
    return data


def _pair_ids(project: Project, task: Task, predictions: dict) -> dict[str, int]:
    rows = Pair.objects.filter(project=project).values_list("external_id", "id", "task_id")
    known = {external_id: (pair_id, task_id) for external_id, pair_id, task_id in rows}
    for number, external_id in enumerate(predictions, start=1):
        if external_id not in known:
            raise ImportFailed(
                f"pair id {external_id!r} is unknown to project {project.slug!r}", number
            )
        if known[external_id][1] != task.id:
            raise ImportFailed(f"pair id {external_id!r} is not in task {task.slug!r}", number)
    return {external_id: ids[0] for external_id, ids in known.items()}
