"""`pairs_import`: all-or-nothing import of a pair file into a project's task.

Two phases. First every record is parsed and every image checked (nothing written); any
problem stops the import with the record number. The checked records go to an anonymous
temporary file, batch by batch (pair_import_batches.py), not into memory. Then one transaction
reads them back a batch (BATCH records) at a time and writes its assets, prompts, responses,
pairs, imported ratings, adjudications and gold checks with bulk inserts before reading the
next; image files are copied into media storage inside it and removed again if the
transaction fails, at whatever batch. Images come from the `--images` folder, or for Parquet
from the file itself, staged in a private temporary folder between the phases (removed however
the import ends).

Memory is bounded by a batch of records, not by the file, so that a large or hostile file
cannot exhaust it; only two things are kept for the whole import, each a few dozen bytes:
every record's id with its number (an id twice in the file is refused naming the first), and
every distinct image's checked facts (size, format: the image source keeps them too). Reading
the file before the transaction, not inside it, keeps the project's lock (and SQLite's writer
lock) as short as before and lets the progress counters of an import job commit while the
file is read.

Re-importing a record whose id exists with the same content is a no-op (counted as
`unchanged`); an existing id with different content is an error.

The pairs the file's ratings or adjudications decide are announced as any decision is
(`pair.decided`; consensus.py::decisions_announce), the whole import's as one burst.
"""

import hashlib
import json
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

from django.core.exceptions import ValidationError
from django.db import transaction

from annotation.gold.services import gold_from_import
from annotation.services.consensus import decision_set, decisions_announce
from content.image_cleaning import clean_copy_make
from content.importing.errors import ImportFailed
from content.importing.formats import MMRB2_SCALE, PairRecord, read_records
from content.importing.images import (
    CheckedImage,
    ImageFolder,
    ImageRejected,
    ImageSource,
    StagedImages,
    private_temp_folder,
)
from content.models import Asset, Generator, Pair, PairSearch, Prompt, Response
from content.models.prompt import asset_storage_name
from content.search_text import pair_search_text
from core.media_store import media_store
from imports.services.import_summary import ImportSummary
from imports.services.pair_import_batches import (
    BATCH,
    PreparedBatches,
    ProjectBefore,
    WrittenFiles,
)
from imports.services.pair_import_ratings import (
    imported_adjudication,
    imported_adjudications_write,
    imported_ratings_write,
)
from projects.events import published_together
from projects.models import Project
from setup.services import project_get_or_create, task_get_or_create

# Called with (records checked, images checked) while a file is read.
Progress = Callable[[int, int], None]


@dataclass
class _Prepared:
    """A validated record with its images resolved to checked files."""

    record: PairRecord
    prompt_content: list | None  # parts with image names replaced by SHA-256
    content_a: list
    content_b: list
    prompt_fingerprint: str
    fingerprint: str
    legacy_fingerprint: str  # with the task slug, as pairs were fingerprinted until 2026-12


@dataclass
class _FileChecked:
    """What the check of the whole file keeps for the writer: a few facts, not the records."""

    images: dict[str, CheckedImage] = field(default_factory=dict)  # by SHA-256
    scale: int | None = None  # the scale of the records' scores: one per file
    has_scores: bool = False


def pairs_import(
    path: Path | str,
    *,
    project_slug: str,
    task_slug: str,
    file_format: str = "native",
    images_dir: Path | str | None = None,
    as_candidates: bool = False,
    queue: bool = False,
    progress: Progress | None = None,
) -> ImportSummary:
    """Import the file (formats: see content.importing.formats.FORMATS); raises
    ImportFailed, naming the record when one is at fault, and then nothing is written.
    `queue` sends new unlabelled pairs straight to annotation instead of leaving them
    candidates for the judge ensemble. `progress`, when given, is called with (records
    checked, images checked) as they are."""
    started = time.perf_counter()
    path = Path(path)
    summary = ImportSummary(project=project_slug, task=task_slug, format=file_format)
    with (
        _records_and_images(path, file_format, images_dir) as (records, source),
        PreparedBatches() as batches,
    ):
        checked = _prepare_all(path, records, task_slug, source, batches, summary, progress)
        file_scale = checked.scale or (MMRB2_SCALE if file_format == "mmrb2" else None)
        try:
            _write_all(batches, checked, summary, file_scale, as_candidates, queue)
        except ValidationError as exc:  # a project or task slug that is not a slug
            raise ImportFailed("; ".join(exc.messages)) from None
    summary.seconds = time.perf_counter() - started
    return summary


@contextmanager
def _records_and_images(path: Path, file_format: str, images_dir) -> Iterator[tuple]:
    if file_format != "parquet":
        yield read_records(path, file_format), ImageFolder(images_dir)
        return
    if images_dir:
        raise ImportFailed(
            "--images is not used with --format parquet: the images come from the file"
        )
    # pyarrow costs every web process ~50 MB: load it only when a Parquet file comes in.
    from content.importing.parquet import read_parquet_records

    with private_temp_folder("arbiter-import-") as staging:
        staged = StagedImages(staging)
        yield read_parquet_records(path, staged), staged


def _write_all(batches, checked: _FileChecked, summary, file_scale, as_candidates, queue):
    """Write the checked batches in one transaction, one batch in memory at a time."""
    with WrittenFiles() as written:
        try:
            with published_together(), transaction.atomic():
                project, _ = project_get_or_create(
                    summary.project,
                    scale_points=file_scale or None,
                    scores_given=checked.has_scores,
                )
                # Imports into one project take turns: each sees what the previous one committed.
                project = Project.objects.select_for_update().get(pk=project.pk)
                if file_scale and project.scale_points != file_scale and checked.has_scores:
                    raise ImportFailed(
                        f"the file's scores are on a 1..{file_scale} scale but project "
                        f"{project.slug!r} uses K={project.scale_points}; import it into a new "
                        "project"
                    )
                task = task_get_or_create(project, summary.task)
                before = ProjectBefore.of(project)
                stored_before: set[str] = set()  # images stored when this import first used them
                for batch in batches:
                    new_records = _skip_unchanged(project, task, batch, summary)
                    stored_before |= _write_assets(checked.images, new_records, summary, written)
                    _write_pairs(project, task, new_records, summary, as_candidates, queue)
                    summary.gold += gold_from_import(task, [item.record for item in batch])
                _count_reused(before, stored_before, summary)
        except BaseException:
            written.remove_orphans()
            raise


def _prepare_all(
    path, records, task_slug, source: ImageSource, batches, summary, progress=None
) -> _FileChecked:
    """Check every record and append it to `batches`. The ids seen stay in memory with their
    record numbers (a few dozen bytes a record) to refuse an id given twice."""
    checked = _FileChecked()
    seen_ids: dict[str, int] = {}
    batch: list[_Prepared] = []
    for record in records:
        if record.external_id in seen_ids:
            raise ImportFailed(
                f"duplicate id {record.external_id!r} (first seen in record "
                f"{seen_ids[record.external_id]})",
                record.number,
            )
        seen_ids[record.external_id] = record.number
        try:
            batch.append(_prepare(record, task_slug, source, checked.images))
        except ImageRejected as exc:
            raise ImportFailed(str(exc), record.number) from None
        _note_scale(checked, record)
        summary.records += 1
        summary.derived_ids += bool(record.origin.get("derived_id"))
        if len(batch) == BATCH:
            batches.append(batch)
            batch = []
        if progress is not None:
            progress(summary.records, len(checked.images))
    if batch:
        batches.append(batch)
    if not summary.records:
        # Not the file's name: an upload's is the name the server stored it under.
        raise ImportFailed("the data file holds no records")
    return checked


def _note_scale(checked: _FileChecked, record: PairRecord) -> None:
    checked.has_scores = checked.has_scores or bool(record.scores)
    if record.scale is None or record.scale == checked.scale:
        return
    if checked.scale is not None:
        scales = sorted((checked.scale, record.scale))
        raise ImportFailed(
            f"records use different scales {scales}; use one per file", record.number
        )
    checked.scale = record.scale


def _hashed(parts: list, source: ImageSource, images: dict) -> list:
    hashed = []
    for kind, value in parts:
        if kind == "image":
            checked = source.check(value)
            images[checked.sha256] = checked
            value = checked.sha256
        hashed.append([kind, value])
    return hashed


def _digest(obj) -> str:
    text = json.dumps(obj, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _prepare(record: PairRecord, task_slug: str, source: ImageSource, images) -> _Prepared:
    prompt_content = (
        None if record.prompt_content is None else _hashed(record.prompt_content, source, images)
    )
    content_a = _hashed(record.response_a.content, source, images)
    content_b = _hashed(record.response_b.content, source, images)
    prompt_fingerprint = _digest([record.prompt_source, record.prompt_metadata, prompt_content])
    # Arbiter's own fields count only when present, so that the records of older files keep
    # the fingerprints they were imported with. Derived fields (mean, status, ...) are left
    # out: they are decided again on import.
    arbiter_fields = record.arbiter_fields()
    content = [
        record.external_id,
        prompt_fingerprint,
        [record.response_a.model_name, content_a, record.response_a.grades],
        [record.response_b.model_name, content_b, record.response_b.grades],
        record.chosen,
        record.scores,
        record.scale,
        record.metadata,
        *([arbiter_fields] if arbiter_fields else []),
        # Only when present: records without groups keep their earlier fingerprints.
        *([[record.response_a.groups, record.response_b.groups]] if _grouped(record) else []),
    ]
    # The fingerprint is the record's content, whichever task it is imported into: the same
    # record in two files (MJ-Bench repeats pairs across its category files) is one pair.
    # Pairs imported before kept the task in theirs, which still reads as unchanged.
    fingerprint = _digest(content)
    legacy = _digest([task_slug, *content])
    return _Prepared(
        record, prompt_content, content_a, content_b, prompt_fingerprint, fingerprint, legacy
    )


def _grouped(record: PairRecord) -> bool:
    return bool(record.response_a.groups or record.response_b.groups)


def _skip_unchanged(project, task, prepared, summary) -> list[_Prepared]:
    """The records not in the project yet. A record already there with the same content is
    skipped (`unchanged`; `in_other_tasks` when it lives in another task, where it stays:
    a pair belongs to one task); the same id with other content refuses the import."""
    existing: dict[str, tuple[str, int]] = {}
    ids = [item.record.external_id for item in prepared]
    for start in range(0, len(ids), BATCH):
        # Unordered: ordered by id, SQLite walks every pair of the project (its project index
        # is in id order) instead of looking each id up, once per batch of the file.
        rows = Pair.objects.filter(
            project=project, external_id__in=ids[start : start + BATCH]
        ).order_by()
        existing.update(
            (external_id, (fingerprint, task_id))
            for external_id, fingerprint, task_id in rows.values_list(
                "external_id", "fingerprint", "task_id"
            )
        )
    new_records = []
    for item in prepared:
        fingerprint, task_id = existing.get(item.record.external_id, (None, None))
        if fingerprint is None:
            new_records.append(item)
        elif fingerprint in (item.fingerprint, item.legacy_fingerprint):
            summary.unchanged += 1
            if task is not None and task_id != task.pk:
                summary.in_other_tasks += 1
        else:
            raise ImportFailed(
                f"pair id {item.record.external_id!r} already exists in project "
                f"{project.slug!r} with different content",
                item.record.number,
            )
    return new_records


def _write_assets(
    images: dict[str, CheckedImage], new_records, summary, written: WrittenFiles
) -> set[str]:
    """Store the images that the batch's new records are the first of this import to show
    (`images` loses each once done, so that a later batch counts it no more). Counted as new
    here; returns those already stored, which `_count_reused` sorts out."""
    used = {
        value
        for item in new_records
        for parts in (item.prompt_content or [], item.content_a, item.content_b)
        for kind, value in parts
        if kind == "image" and value in images
    }
    hashes = sorted(used)
    known: set[str] = set()
    for start in range(0, len(hashes), BATCH):
        batch = hashes[start : start + BATCH]
        known.update(Asset.objects.filter(sha256__in=batch).values_list("sha256", flat=True))
    fresh = [images.pop(sha) for sha in hashes if sha not in known]
    for sha in known:
        del images[sha]
    summary.images_new += len(hashes)
    store = media_store()
    assets = []
    for image in fresh:
        name = asset_storage_name(image.sha256, image.format)
        if not store.exists(name):
            _copy_verified(image, name, store)
            written.add(name)
        # The copy without metadata that annotators and judges get, made now rather than on
        # first use: otherwise the first judge run after an import cleans every image it
        # sends and runs at three quarters of a warm run's pace (bench.judges). One it cannot
        # make now is made, or refused, on first use as before.
        with suppress(OSError, ValueError):
            if (made := clean_copy_make(image.sha256, name)) is not None:
                written.add(made)
        assets.append(
            Asset(
                sha256=image.sha256,
                file=name,
                format=image.format,
                width=image.width,
                height=image.height,
                size_bytes=image.size_bytes,
            )
        )
    # ignore_conflicts: an import into another project may add the same image concurrently.
    Asset.objects.bulk_create(assets, batch_size=BATCH, ignore_conflicts=True)
    return known


def _count_reused(before: ProjectBefore, stored_before: set[str], summary) -> None:
    """Storage is shared between projects, but the summary must not tell a lead that an image
    exists in a project they may not see: "reused" counts only images this project's pairs
    showed before the import (the rest of what the new pairs show is new to it); prompts
    are the project's own."""
    summary.images_reused = len(before.images_shown(stored_before))
    summary.images_new -= summary.images_reused
    summary.prompts_reused = before.prompts_used_since()


def _copy_verified(image: CheckedImage, name: str, store) -> None:
    """Copy the checked file into media storage (atomically on the local disk; one PUT on
    S3), refusing it if it changed since it was checked."""
    data = image.path.read_bytes()  # bounded by ARBITER_MAX_IMAGE_BYTES when it was checked
    if hashlib.sha256(data).hexdigest() != image.sha256:
        raise ImportFailed(f"image {image.path.name!r} changed on disk during the import")
    store.put_bytes(name, data)


def _generators(new_records) -> dict[str, Generator]:
    names = {
        name
        for item in new_records
        for name in (item.record.response_a.model_name, item.record.response_b.model_name)
    }
    Generator.objects.bulk_create([Generator(name=n) for n in names], ignore_conflicts=True)
    return {g.name: g for g in Generator.objects.filter(name__in=names)}


def _prompts(project, new_records, summary) -> dict[str, Prompt]:
    wanted = {item.prompt_fingerprint: item for item in new_records}
    fingerprints = list(wanted)
    prompts: dict[str, Prompt] = {}
    for start in range(0, len(fingerprints), BATCH):
        batch = fingerprints[start : start + BATCH]
        for prompt in Prompt.objects.filter(project=project, fingerprint__in=batch):
            prompts[prompt.fingerprint] = prompt
    fresh = [
        Prompt(
            project=project,
            source=item.record.prompt_source,
            metadata=item.record.prompt_metadata,
            content=item.prompt_content,
            fingerprint=fingerprint,
        )
        for fingerprint, item in wanted.items()
        if fingerprint not in prompts
    ]
    Prompt.objects.bulk_create(fresh, batch_size=BATCH)
    summary.prompts_new += len(fresh)
    prompts.update((prompt.fingerprint, prompt) for prompt in fresh)
    return prompts


def _write_pairs(project, task, new_records, summary, as_candidates, queue) -> None:
    if not new_records:
        return
    generators = _generators(new_records)
    prompts = _prompts(project, new_records, summary)
    responses = []
    for item in new_records:
        sides = ((item.record.response_a, item.content_a), (item.record.response_b, item.content_b))
        for side, content in sides:
            responses.append(
                Response(
                    generator=generators[side.model_name],
                    content=content,
                    imported_grades=side.grades,
                    groups=side.groups,
                )
            )
    Response.objects.bulk_create(responses, batch_size=BATCH)
    summary.responses += len(responses)
    summary.graded_responses += sum(1 for r in responses if r.imported_grades)

    pairs, adjudications, searched_by = [], [], []
    for index, item in enumerate(new_records):
        record = item.record
        pair = Pair(
            project=project,
            task=task,
            external_id=record.external_id,
            prompt=prompts[item.prompt_fingerprint],
            response_a=responses[2 * index],
            response_b=responses[2 * index + 1],
            source=record.prompt_source,
            metadata={**record.metadata, "origin": record.origin}
            if record.origin
            else record.metadata,
            same_model=record.response_a.model_name == record.response_b.model_name,
            reference_label=record.reference,
            fingerprint=item.fingerprint,
            status=_initial_status(record, project, as_candidates, queue),
        )
        searched_by.append(
            pair_search_text(
                external_id=record.external_id,
                source=record.prompt_source,
                prompt=item.prompt_content,
                response_a=item.content_a,
                response_b=item.content_b,
            )
        )
        adjudication = imported_adjudication(record)
        decision_set(pair, record.scores, adjudication, project)
        pairs.append(pair)
        if adjudication is not None:
            adjudications.append((adjudication, pair))
    Pair.objects.bulk_create(pairs, batch_size=BATCH)
    PairSearch.objects.bulk_create(
        [PairSearch(pair=pair, text=text) for pair, text in zip(pairs, searched_by, strict=True)],
        batch_size=BATCH,
    )
    summary.pairs += len(pairs)
    for pair in pairs:
        summary.statuses[pair.status] = summary.statuses.get(pair.status, 0) + 1
    summary.ratings += _write_ratings(project, new_records, pairs)
    summary.adjudications += imported_adjudications_write(project, adjudications)
    decisions_announce([(pair, ("", "")) for pair in pairs], project)


def _initial_status(record: PairRecord, project: Project, as_candidates: bool, queue: bool) -> str:
    """Status before the consensus rule runs (which decides pairs with N ratings or more).
    A labelled record is a finished benchmark pair unless the lead asks to annotate it anew."""
    if record.scores and len(record.scores) < project.annotators_per_pair:
        return Pair.Status.IN_PROGRESS
    if record.reference and not as_candidates and record.gold is None:
        return Pair.Status.KEPT
    return Pair.Status.QUEUED if queue else Pair.Status.CANDIDATE


def _write_ratings(project: Project, new_records, pairs) -> int:
    rows = [(item.record, pair) for item, pair in zip(new_records, pairs, strict=True)]
    return imported_ratings_write(project, rows)
