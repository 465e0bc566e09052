"""The judges' scores of an MJ-Bench bias file, after its pairs were imported
(content/importing/mjbench_bias.py): every score column (or the ones named) becomes a
pointwise judge named exactly as the column, with one verdict per pair holding the two images'
scores. An image without a number in a column leaves that side's score empty (the verdict is
then `invalid`, and the image out of the judge's bias figures); a pair with neither gets no
verdict from that judge."""

import json
import time
from pathlib import Path

from content.importing.errors import ImportFailed
from content.importing.mjbench_bias import bias_file_rows, bias_pairs, score_columns
from content.models import Pair
from judging.models import IMPORTED_SCALE, Verdict
from judging.parsing import side_from_scores
from judging.services.verdict_import import (
    finite_number,
    import_target,
    verdicts_store,
)


def bias_scores_import(
    path: Path | str, *, project_slug: str, task_slug: str, judges: list[str] | None = None
) -> dict:
    started = time.perf_counter()
    path = Path(path)
    rows = bias_file_rows(path)
    columns = score_columns(rows)
    if judges:
        unknown = [name for name in judges if name not in columns]
        if unknown:
            raise ImportFailed(
                f"no score column {', '.join(map(repr, unknown))} in the file; it has "
                f"{', '.join(columns) or 'none'}"
            )
        columns = judges
    project, task = import_target(project_slug, task_slug)
    pairs = bias_pairs(rows)
    pair_ids = dict(
        Pair.objects.filter(task=task, external_id__in=[p.external_id for p in pairs])
        .values_list("external_id", "id")
    )  # fmt: skip
    missing = [p.external_id for p in pairs if p.external_id not in pair_ids]
    if missing:
        raise ImportFailed(f"pair {missing[0]!r} is not in task {task.slug!r}; import the pairs")
    scored = {}
    for column in columns:
        verdicts = []
        for pair in pairs:
            score_a, score_b = (
                finite_number(rows[index].get(column)) for index in (pair.first, pair.second)
            )
            if score_a is None and score_b is None:
                continue
            raw = {"column": column, "score_0": score_a, "score_1": score_b}
            verdicts.append(
                Verdict(
                    pair_id=pair_ids[pair.external_id],
                    order=Verdict.Order.POINTWISE,
                    sample=0,
                    score_a=score_a,
                    score_b=score_b,
                    choice=side_from_scores(score_a, score_b),
                    raw_output=json.dumps(raw),
                )
            )
        if verdicts:
            verdicts_store(verdicts, project, task, column, path.name, IMPORTED_SCALE)
        scored[column] = len(verdicts)
    return {"judges": scored, "seconds": round(time.perf_counter() - started, 2)}
