"""The exported rows of a task, read a batch of pairs at a time.

Each batch costs a fixed number of queries whatever its content: the pairs with their prompts
and responses, their ratings, the ratings' aspect scores, the adjudications, the verdicts (when
asked) and the images they show. Memory holds one batch."""

import hashlib
import hmac
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from django.conf import settings

from annotation.models import AspectScore, Rating
from annotation.selectors.pairs import latest_adjudications
from content.models import Pair, Response
from exports.images import ImageRef, image_refs
from judging.models import Verdict
from projects.models import Project, Task

BATCH = 500


@dataclass
class RowBatch:
    rows: list[dict[str, Any]]
    images: dict[str, ImageRef]  # export path → the image, for every image the rows show


def annotator_id(project: Project, user_id: int, username: str, placeholder: bool) -> str:
    """The anonymous id of an annotator in the export (docs/export-format.md): placeholder
    accounts of imported ratings keep their own id, so that export → import → export is stable;
    anyone else (a person, whatever their name) gets a keyed hash that reveals nothing."""
    prefix = f"imported-{project.slug}-"
    if placeholder and username.startswith(prefix) and len(username) > len(prefix):
        return username[len(prefix) :]
    message = f"annotator:{project.pk}:{user_id}".encode()
    digest = hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()
    return "r-" + digest[:12]


def _id_order(anonymous_id: str) -> tuple[Any, ...]:
    # Imported ids are rater positions ("1", "2", ... "10"): numeric order keeps the order of
    # the source file's score list.
    if anonymous_id.isdigit():
        return (0, int(anonymous_id), "")
    return (1, 0, anonymous_id)


def task_batches(
    project: Project,
    task: Task,
    statuses: Sequence[str],
    *,
    with_verdicts: bool,
    batch_size: int = BATCH,
) -> Iterator[RowBatch]:
    """The task's pairs in these statuses, by id, as export rows (keyset pagination)."""
    pairs = (
        Pair.objects.filter(task=task, status__in=statuses)
        .select_related("prompt", "response_a__generator", "response_b__generator")
        .order_by("id")
    )
    last_id = 0
    while True:
        batch = list(pairs.filter(id__gt=last_id)[:batch_size])
        if not batch:
            return
        yield _rows(project, task, batch, with_verdicts)
        if len(batch) < batch_size:
            return
        last_id = batch[-1].id


def judge_labelled_batches(
    project: Project,
    task: Task,
    labels: Mapping[int, str],
    source: str,
    *,
    with_verdicts: bool,
    batch_size: int = BATCH,
) -> Iterator[RowBatch]:
    """Pairs no expert decided, as export rows whose `chosen` is the judges' label (`labels`:
    pair id -> side) and `label_source` says so, a batch at a time."""
    ordered = sorted(labels)
    for start in range(0, len(ordered), batch_size):
        pairs = list(
            Pair.objects.filter(task=task, pk__in=ordered[start : start + batch_size])
            .select_related("prompt", "response_a__generator", "response_b__generator")
            .order_by("id")
        )
        if not pairs:
            continue
        batch = _rows(project, task, pairs, with_verdicts)
        for pair, row in zip(pairs, batch.rows, strict=True):
            row["chosen"], row["label_source"] = labels[pair.pk], source
        yield batch


def _rows(project: Project, task: Task, pairs: list[Pair], with_verdicts: bool) -> RowBatch:
    ids = [pair.id for pair in pairs]
    ratings = _ratings(project, ids)
    adjudications = {
        pair_id: {"decision": row.decision, "note": row.note}
        for pair_id, row in latest_adjudications(ids).items()
    }
    verdicts = _verdicts(ids) if with_verdicts else None
    shas = {
        value
        for pair in pairs
        for parts in (pair.prompt.content or [], pair.response_a.content, pair.response_b.content)
        for kind, value in parts
        if kind == "image"
    }
    refs = image_refs(shas)
    rows = [
        _row(project, task, pair, ratings[pair.id], adjudications.get(pair.id), verdicts, refs)
        for pair in pairs
    ]
    return RowBatch(rows, {ref.path: ref for ref in refs.values()})


def _ratings(project: Project, ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    aspects: dict[int, dict[str, int]] = defaultdict(dict)
    scores = AspectScore.objects.filter(rating__pair_id__in=ids).order_by("aspect")
    for rating_id, aspect, score in scores.values_list("rating_id", "aspect", "score"):
        aspects[rating_id][aspect] = score
    by_pair: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = Rating.objects.filter(pair_id__in=ids).values(
        "id",
        "pair_id",
        "annotator_id",
        "annotator__username",
        "annotator__placeholder",
        "overall",
        "active_seconds",
        "rationale",
        "imported",
    )
    for row in rows:
        anonymous = annotator_id(
            project,
            row["annotator_id"],
            row["annotator__username"],
            row["annotator__placeholder"] is not None,
        )
        by_pair[row["pair_id"]].append(
            {
                "annotator": anonymous,
                "overall": row["overall"],
                "aspects": aspects.get(row["id"], {}),
                "active_seconds": row["active_seconds"],
                "rationale": row["rationale"],
                "imported": row["imported"],
            }
        )
    for ratings in by_pair.values():
        ratings.sort(key=lambda rating: _id_order(rating["annotator"]))
    return by_pair


def _verdicts(ids: list[int]) -> dict[int, list[dict[str, Any]]]:
    by_pair: dict[int, list[dict[str, Any]]] = defaultdict(list)
    rows = (
        Verdict.objects.filter(pair_id__in=ids)
        .order_by("judge__name", "order", "sample")
        .values_list(
            "pair_id", "judge__name", "order", "sample", "choice", "error", "score_a", "score_b"
        )
    )
    for pair_id, judge, order, sample, choice, error, score_a, score_b in rows:
        verdict = {"judge": judge, "order": order, "sample": sample, "choice": choice}
        verdict["error"] = error
        if order == Verdict.Order.POINTWISE:  # the scores the choice came from
            verdict.update(score_a=score_a, score_b=score_b)
        by_pair[pair_id].append(verdict)
    return by_pair


def _parts(content: list[Any] | None, refs: dict[str, ImageRef]) -> list[Any] | None:
    if content is None:
        return None
    return [[kind, refs[value].path if kind == "image" else value] for kind, value in content]


def _side(response: Response, refs: dict[str, ImageRef]) -> dict[str, Any]:
    side: dict[str, Any] = {
        "model_name": response.generator.name,
        "response_content": _parts(response.content, refs),
    }
    if response.imported_grades:
        side["grades"] = list(response.imported_grades)
    if response.groups:
        side["groups"] = dict(response.groups)
    return side


def _row(
    project: Project,
    task: Task,
    pair: Pair,
    ratings: list[dict[str, Any]],
    adjudication: Any,
    verdicts: dict[int, list[dict[str, Any]]] | None,
    refs: dict[str, ImageRef],
) -> dict[str, Any]:
    scores = [rating["overall"] for rating in ratings]
    grades_a, grades_b = pair.response_a.imported_grades, pair.response_b.imported_grades
    human_annotations: list[Any] | dict[str, Any]
    if scores or not (grades_a or grades_b):
        human_annotations = scores
    else:  # MMRB2 reasoning: per-response grades instead of pairwise scores
        human_annotations = {"response_a_ratings": grades_a, "response_b_ratings": grades_b}
    row = {
        "id": pair.external_id,
        "prompt_source": pair.prompt.source,
        "prompt_metadata": pair.prompt.metadata,
        "prompt_content": _parts(pair.prompt.content, refs),
        "response_a": _side(pair.response_a, refs),
        "response_b": _side(pair.response_b, refs),
        "chosen": pair.label,
        "human_annotations": human_annotations,
        "scale": project.scale_points,
        "task": task.slug,
        "status": pair.status,
        "reference_label": pair.reference_label,
        "metadata": pair.metadata,
        "ratings": ratings,
        "mean": pair.consensus_mean,  # stored with the ratings (consensus.py::decision_set)
        "span": pair.consensus_span,
        "decided_by": pair.decided_by,
        # Whose label `chosen` is: the experts' (their ratings, a lead's decision or an
        # imported one); the judges' with a guarantee (exports/judge_labels.py); none.
        "label_source": "experts" if pair.label else "",
        "adjudication": adjudication,
    }
    if verdicts is not None:
        row["verdicts"] = verdicts.get(pair.id, [])
    return row
