"""`scores_import`: MJ-Bench's scoring-model result files as a pointwise judge's verdicts.

File shape (`personal/result/<model>/<subset>0.0.json`): a JSON list of `{id, caption,
image_0_path, image_1_path | sharp_image, motion_blur_image, score_0, score_1, label, pred}`.
Each row is matched to a pair of the task by its two image file names (the names the pair was
imported with, kept in its metadata as `origin`; the other way round swaps the scores), falling
back to its `id` as the row index of the captions file the pairs came from. A row matching no
pair, or several, refuses the file; nothing is written.

The verdict is a `pointwise` trial with `score_a` = the score of the pair's response A; its
choice is the higher score's side, a tie when equal: MJ-Bench's own `get_pred` at its
threshold 0.0, so `pred` is never trusted, only the scores (on every real file they agree).
"""

import json
import time
from collections import defaultdict
from pathlib import Path

from content.importing.errors import ImportFailed, require_storable_text
from content.importing.formats import mjbench_images
from content.models import Pair
from judging.models import IMPORTED_SCALE, Verdict
from judging.parsing import side_from_scores
from judging.prediction_records import prediction_list_records
from judging.services.verdict_import import (
    finite_number,
    import_target,
    require_verdict_file_size,
    verdicts_store,
)

AMBIGUOUS = object()


def scores_import(path: Path | str, *, project_slug: str, task_slug: str, judge_name: str) -> dict:
    started = time.perf_counter()
    path = Path(path)
    require_verdict_file_size(path)
    project, task = import_target(project_slug, task_slug)
    by_images, by_row = _task_pairs(task)
    # Each row matches another pair of the task: what is kept is bounded by the task.
    verdicts: list[Verdict] = []
    matched: dict[int, int] = {}  # pair -> the row number that matched it
    matched_by_row = 0
    counts = {choice: 0 for choice in ("A", "B", "tie", "invalid", "failed")}
    rows = prediction_list_records(path, "an MJ-Bench result file: a JSON list of rows")
    for number, row in rows:
        if not isinstance(row, dict):
            raise ImportFailed("a row must be a JSON object", number)
        require_storable_text(row, number)
        score_0, score_1 = (_score(row, key, number) for key in ("score_0", "score_1"))
        images = mjbench_images(row, number)
        if by_images.get(images, AMBIGUOUS) is not AMBIGUOUS:
            pair_id, swapped = by_images[images], False
        elif by_images.get(images[::-1], AMBIGUOUS) is not AMBIGUOUS:
            pair_id, swapped = by_images[images[::-1]], True
        else:
            pair_id, swapped = _by_row(row, by_row, images, task, number), False
            matched_by_row += 1
        if pair_id in matched:
            raise ImportFailed(f"rows {[matched[pair_id], number]} match the same pair")
        matched[pair_id] = number
        score_a, score_b = (score_1, score_0) if swapped else (score_0, score_1)
        choice = side_from_scores(score_a, score_b)
        counts[choice] += 1
        verdicts.append(
            Verdict(
                pair_id=pair_id,
                order=Verdict.Order.POINTWISE,
                sample=0,
                score_a=score_a,
                score_b=score_b,
                choice=choice,
                raw_output=json.dumps(row, ensure_ascii=False)[:20000],
            )
        )
    if not verdicts:
        raise ImportFailed("expected an MJ-Bench result file: a JSON list of rows")
    judge, _run = verdicts_store(
        verdicts, project, task, judge_name, path.name, pointwise_scale=IMPORTED_SCALE
    )
    return {
        "project": project.slug,
        "task": task.slug,
        "judge": judge.name,
        "pairs": len(verdicts),
        "verdicts": len(verdicts),
        "choices": counts,
        "matched_by_row": matched_by_row,
        "seconds": round(time.perf_counter() - started, 2),
    }


def _task_pairs(task) -> tuple[dict, dict]:
    """The task's pairs by their (image 0, image 1) names and by their row in the file they
    came from (only rows that are unique in the task: two files' row 3 match nothing)."""
    by_images, by_row = {}, defaultdict(list)
    for pair_id, origin in Pair.objects.filter(task=task).values_list("id", "metadata__origin"):
        if not isinstance(origin, dict):
            continue
        names = (origin.get("image_0"), origin.get("image_1"))
        if all(isinstance(name, str) for name in names):
            # Two pairs with the same names match nothing by name (AMBIGUOUS): rows then.
            by_images[names] = AMBIGUOUS if names in by_images else pair_id
        if isinstance(origin.get("row"), int):
            by_row[origin["row"]].append(pair_id)
    return by_images, by_row


def _by_row(row: dict, by_row: dict, images: tuple, task, number: int) -> int:
    index = row.get("id")
    candidates = by_row.get(index, []) if isinstance(index, int) else []
    if len(candidates) == 1:
        return candidates[0]
    why = "several pairs came from that row" if candidates else "no pair came from that row"
    raise ImportFailed(
        f"no pair of task {task.slug!r} has the images {images[0]!r} and {images[1]!r}, and "
        f"its id {index!r} as a row of the captions file does not help ({why})",
        number,
    )


def _score(row: dict, key: str, number: int) -> float:
    value = row.get(key)
    score = finite_number(value)
    if score is None:
        raise ImportFailed(f"{key}={repr(value)[:40]} must be a finite number", number)
    return score
