"""The real MMRB2 files: an imported set exports with the ids, labels and human annotations
of the source file (skips when ../shared/datasets/mmrb2 is absent)."""

import json

import pyarrow.parquet as pq
import pytest

from exports.writer import export_dataset
from imports.services.pair_import import pairs_import
from projects.models import Project
from tests.conftest import SHARED_MMRB2
from tests.exporting.helpers import jsonl_rows, manifest_of, sha256_of

pytestmark = [pytest.mark.mmrb2, pytest.mark.django_db]


@pytest.mark.parametrize("task", ["t2i", "reasoning"])
def test_an_mmrb2_set_exports_as_its_source(mmrb2_images, tmp_path, task):
    source = json.loads((SHARED_MMRB2 / f"{task}_response_only.json").read_text())["pairs"]
    pairs_import(
        SHARED_MMRB2 / f"{task}_response_only.json",
        project_slug="mmrb2",
        task_slug=task,
        file_format="mmrb2",
        images_dir=mmrb2_images,
    )
    project = Project.objects.get(slug="mmrb2")
    summary = export_dataset(project, tmp_path / "j", include_dropped=True)
    rows = jsonl_rows(tmp_path / "j", task)
    assert summary.pairs == len(rows) == len(source) == 1000
    by_id = {row["id"]: row for row in rows}
    assert set(by_id) == {pair["id"] for pair in source}
    for pair in source:
        row = by_id[pair["id"]]
        assert row["human_annotations"] == pair["human_annotations"], pair["id"]
        assert row["chosen"] == pair["chosen"], pair["id"]
        assert row["prompt_source"] == pair["prompt_source"]
        assert row["prompt_metadata"] == pair["prompt_metadata"]
        for side in ("response_a", "response_b"):
            assert row[side]["model_name"] == pair[side]["model_name"]
            kinds = [kind for kind, _ in row[side]["response_content"]]
            assert kinds == [kind for kind, _ in pair[side]["response_content"]]
    manifest = manifest_of(tmp_path / "j")
    images = [path for path in manifest["files"] if path.startswith("images/")]
    assert len(images) == summary.images
    for path in images[:50]:
        assert sha256_of(tmp_path / "j" / path) == manifest["files"][path]["sha256"]

    export_dataset(project, tmp_path / "p", file_format="parquet", include_dropped=True)
    table = pq.read_table(tmp_path / "p" / f"{task}.parquet", columns=["pair_id", "chosen"])
    assert table.column("pair_id").to_pylist() == [row["id"] for row in rows]
    assert table.column("chosen").to_pylist() == [row["chosen"] for row in rows]
