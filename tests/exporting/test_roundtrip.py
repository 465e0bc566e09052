"""Export → import into a new project → export again gives the same dataset.

The project under test has interleaved text and images, three annotators with aspect scores,
rationales and active time, a pair kept by adjudication against the consensus, and a pair the
consensus dropped. The only field allowed to change is a rating's `imported` flag: in the new
project every rating came from a file.
"""

import json

import pyarrow.parquet as pq
import pytest

from annotation.services.adjudication import pair_adjudicate
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from exports.writer import export_dataset
from imports.services.pair_import import pairs_import
from projects.models import Membership, Project, Task
from tests.conftest import SHARED_MMRB2
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

ASPECTS = [{"key": "faithfulness", "label": "Faithfulness", "help": ""}]
# Form scores (Left/Right orientation) per annotator for the 6 pairs.
FORM_SCORES = {
    "ann1": [1, 7, 2, 6, 1, 4],
    "ann2": [2, 7, 1, 1, 2, 4],
    "ann3": [1, 6, 2, 7, 3, 4],
}


@pytest.fixture
def finished_project(tmp_path):
    task = queued_pairs(tmp_path, project_slug="orig", task_slug="t2i", count=6)
    Task.objects.filter(pk=task.pk).update(aspects=ASPECTS)
    project = task.project
    task.refresh_from_db()
    for name, scores in FORM_SCORES.items():
        user = member(name, project)
        for number, score in enumerate(scores):
            assignment = assignment_claim(user, task)
            rating_submit(
                assignment.pk,
                user,
                RatingInput(
                    overall=score,
                    aspects={"faithfulness": max(1, score - 1)},
                    rationale=f'{name} on pair {number}: ünïcode \u2028 and "quotes"',
                    active_seconds=12.5 + number,
                ),
            )
    lead = member("lead", project, role=Membership.Role.LEAD)
    adjudicated = Pair.objects.filter(project=project).order_by("id")[0]
    pair_adjudicate(adjudicated.pk, lead, "keep_b", "B follows the prompt; raters misread it")
    statuses = set(Pair.objects.filter(project=project).values_list("status", flat=True))
    assert {"kept", "dropped"} <= statuses, "the fixture must hold kept and dropped pairs"
    return project


def jsonl_rows(folder, task_slug="t2i") -> list[dict]:
    lines = (folder / f"{task_slug}.jsonl").read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line.strip()]


def parquet_rows(folder, task_slug="t2i") -> list[dict]:
    return pq.read_table(folder / f"{task_slug}.parquet").to_pylist()


def without_imported_flag(rows: list[dict]) -> list[dict]:
    """Rows with each rating's `imported` flag removed (JSONL dicts or Parquet JSON strings)."""
    cleaned = []
    for row in rows:
        row = dict(row)
        ratings = row["ratings"]
        as_text = isinstance(ratings, str)
        ratings = json.loads(ratings) if as_text else ratings
        ratings = [{k: v for k, v in r.items() if k != "imported"} for r in ratings]
        row["ratings"] = json.dumps(ratings, sort_keys=True) if as_text else ratings
        cleaned.append(row)
    return cleaned


def image_checksums(manifest: dict) -> dict:
    return {path: entry for path, entry in manifest["files"].items() if path.startswith("images/")}


def test_jsonl_round_trip_keeps_pairs_content_images_labels_and_ratings(finished_project, tmp_path):
    first = tmp_path / "first"
    export_dataset(finished_project, first, file_format="jsonl", include_dropped=True)
    pairs_import(
        first / "t2i.jsonl",
        project_slug="copy",
        task_slug="t2i",
        file_format="native",
        images_dir=first,
    )
    second = tmp_path / "second"
    export_dataset(
        Project.objects.get(slug="copy"), second, file_format="jsonl", include_dropped=True
    )

    before, after = jsonl_rows(first), jsonl_rows(second)
    assert len(before) == 6
    assert without_imported_flag(after) == without_imported_flag(before)
    assert all(r["imported"] for row in after for r in row["ratings"])
    assert not any(r["imported"] for row in before for r in row["ratings"])

    by_id = {row["id"]: row for row in before}
    adjudicated = by_id[Pair.objects.filter(project=finished_project).order_by("id")[0].external_id]
    assert adjudicated["decided_by"] == "adjudication"
    assert adjudicated["chosen"] == "B"
    assert adjudicated["adjudication"]["note"] == "B follows the prompt; raters misread it"
    assert {row["status"] for row in before} == {"kept", "dropped"}
    assert all(row["ratings"][0]["aspects"] for row in before)
    assert all(
        isinstance(part, list) for row in before for part in row["response_a"]["response_content"]
    )

    manifest_before = json.loads((first / "manifest.json").read_text())
    manifest_after = json.loads((second / "manifest.json").read_text())
    assert image_checksums(manifest_after) == image_checksums(manifest_before)
    assert len(image_checksums(manifest_before)) == 12  # one image per response, 6 pairs


def test_parquet_round_trip_keeps_the_same_rows(finished_project, tmp_path):
    first = tmp_path / "first"
    export_dataset(finished_project, first, file_format="parquet", include_dropped=True)
    pairs_import(first / "t2i.parquet", project_slug="copy", task_slug="t2i", file_format="parquet")
    second = tmp_path / "second"
    export_dataset(
        Project.objects.get(slug="copy"), second, file_format="parquet", include_dropped=True
    )

    before, after = parquet_rows(first), parquet_rows(second)
    assert len(before) == 6
    assert without_imported_flag(after) == without_imported_flag(before)
    images = [image for row in before for image in row["response_a_images"]]
    assert images and all(image["bytes"] for image in images)


def test_parquet_and_jsonl_exports_hold_the_same_dataset(finished_project, tmp_path):
    export_dataset(finished_project, tmp_path / "j", file_format="jsonl", include_dropped=True)
    export_dataset(finished_project, tmp_path / "p", file_format="parquet", include_dropped=True)
    from_jsonl = jsonl_rows(tmp_path / "j")
    from_parquet = parquet_rows(tmp_path / "p")
    assert [row["id"] for row in from_jsonl] == [row["pair_id"] for row in from_parquet]
    for jrow, prow in zip(from_jsonl, from_parquet, strict=True):
        assert prow["chosen"] == jrow["chosen"]
        assert json.loads(prow["human_annotations"]) == jrow["human_annotations"]
        assert json.loads(prow["ratings"]) == jrow["ratings"]
        assert json.loads(prow["response_b_content"]) == jrow["response_b"]["response_content"]
        assert prow["decided_by"] == jrow["decided_by"]
        image_paths = [p["path"] for p in prow["response_a_images"]]
        assert image_paths == [
            value for kind, value in jrow["response_a"]["response_content"] if kind == "image"
        ]
        image_bytes = (tmp_path / "j" / image_paths[0]).read_bytes()
        assert prow["response_a_images"][0]["bytes"] == image_bytes


@pytest.mark.mmrb2
@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_mmrb2_set_round_trips(file_format, mmrb2_images, tmp_path):
    pairs_import(
        SHARED_MMRB2 / "edit_response_only.json",
        project_slug="mmrb2",
        task_slug="edit",
        file_format="mmrb2",
        images_dir=mmrb2_images,
    )
    source = json.loads((SHARED_MMRB2 / "edit_response_only.json").read_text())["pairs"]
    first = tmp_path / "first"
    export_dataset(Project.objects.get(slug="mmrb2"), first, file_format=file_format)
    data_file = first / f"edit.{file_format}"
    native = "native" if file_format == "jsonl" else "parquet"
    pairs_import(
        data_file,
        project_slug="copy",
        task_slug="edit",
        file_format=native,
        images_dir=first if file_format == "jsonl" else None,
    )
    second = tmp_path / "second"
    export_dataset(Project.objects.get(slug="copy"), second, file_format=file_format)

    read = jsonl_rows if file_format == "jsonl" else parquet_rows
    before, after = read(first, "edit"), read(second, "edit")
    assert after == before  # imported ratings stay imported: nothing may differ
    kept = {p["id"] for p in source} & {r.get("id", r.get("pair_id")) for r in before}
    assert (
        len(before)
        == len(kept)
        == Pair.objects.filter(project__slug="mmrb2", status="kept").count()
    )
    by_id = {p["id"]: p for p in source}
    for row in before:
        original = by_id[row.get("id", row.get("pair_id"))]
        assert row["chosen"] == original["chosen"]
        annotations = row["human_annotations"]
        annotations = json.loads(annotations) if isinstance(annotations, str) else annotations
        assert annotations == original["human_annotations"]
