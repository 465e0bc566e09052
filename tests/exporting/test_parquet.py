"""Parquet export: the spec's columns and types, the same rows as JSONL, bounded row groups,
and images that Hugging Face `datasets` decodes."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from exports import parquet
from exports.writer import export_dataset
from tests.exporting.helpers import files_under, jsonl_rows, manifest_of, run_export, sha256_of

pytestmark = pytest.mark.django_db

IMAGES = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
EXPECTED_TYPES = {
    "pair_id": pa.string(),
    "prompt_text": pa.string(),
    "prompt_images": IMAGES,
    "response_a_text": pa.string(),
    "response_a_images": IMAGES,
    "response_b_text": pa.string(),
    "response_b_images": IMAGES,
    "chosen": pa.string(),
    "prompt_source": pa.string(),
    "response_a_model": pa.string(),
    "response_b_model": pa.string(),
    "human_annotations": pa.string(),
    "prompt_metadata": pa.string(),
    "task": pa.string(),
    "status": pa.string(),
    "reference_label": pa.string(),
    "decided_by": pa.string(),
    "label_source": pa.string(),
    "scale": pa.int16(),
    "mean": pa.float64(),
    "span": pa.int16(),
    "prompt_content": pa.string(),
    "response_a_content": pa.string(),
    "response_b_content": pa.string(),
    "response_a_grades": pa.string(),
    "response_b_grades": pa.string(),
    "metadata": pa.string(),
    "ratings": pa.string(),
    "adjudication": pa.string(),
    "verdicts": pa.string(),
}


def _text(parts):
    """Texts and MMRB2's `<image_N>` placeholders (numbered from 1), by blank lines."""
    if parts is None:
        return None
    numbers = iter(range(1, len(parts) + 1))
    return "\n\n".join(v if k == "text" else f"<image_{next(numbers)}>" for k, v in parts)


def _image_paths(parts):
    return [v for k, v in parts or [] if k == "image"]


def test_columns_types_and_values_match_the_jsonl_rows(rated, tmp_path):
    run_export(rated.project, tmp_path / "j", include_dropped=True, with_verdicts=True)
    run_export(
        rated.project,
        tmp_path / "p",
        file_format="parquet",
        include_dropped=True,
        with_verdicts=True,
    )
    assert files_under(tmp_path / "p") == {"manifest.json", "edit.parquet", "t2i.parquet"}
    for task in ("t2i", "edit"):
        table = pq.read_table(tmp_path / "p" / f"{task}.parquet")
        assert {f.name: f.type for f in table.schema} == EXPECTED_TYPES
        assert table.schema.names == list(EXPECTED_TYPES)  # MMRB2's layout first
        for row, cells in zip(jsonl_rows(tmp_path / "j", task), table.to_pylist(), strict=True):
            a, b = row["response_a"], row["response_b"]
            assert cells["pair_id"] == row["id"]
            assert cells["prompt_text"] == _text(row["prompt_content"])
            assert cells["response_a_text"] == _text(a["response_content"])
            assert (cells["response_a_model"], cells["response_b_model"]) == (
                a["model_name"],
                b["model_name"],
            )
            for column, parts in (
                ("prompt_images", row["prompt_content"]),
                ("response_a_images", a["response_content"]),
                ("response_b_images", b["response_content"]),
            ):
                paths = _image_paths(parts)
                assert [image["path"] for image in cells[column]] == paths
                for image, path in zip(cells[column], paths, strict=True):
                    assert image["bytes"] == (tmp_path / "j" / path).read_bytes()
            for key in ("chosen", "prompt_source", "task", "status", "reference_label"):
                assert cells[key] == row[key], key
            for key in ("scale", "mean", "span", "decided_by", "label_source"):
                assert cells[key] == row[key], key
            for key in ("human_annotations", "prompt_metadata", "prompt_content", "metadata"):
                assert json.loads(cells[key]) == row[key], key
            for key in ("ratings", "adjudication", "verdicts"):
                assert json.loads(cells[key]) == row[key], key
            assert json.loads(cells["response_a_content"]) == a["response_content"]
            assert cells["response_a_grades"] is None  # no grades: a null cell
    manifest = manifest_of(tmp_path / "p")
    assert manifest["file_format"] == "parquet" and manifest["tasks"][0]["file"] == "edit.parquet"
    for path, entry in manifest["files"].items():
        assert entry["sha256"] == sha256_of(tmp_path / "p" / path)
    assert manifest["counts"]["images"] == 12


def test_null_prompt_grades_and_verdicts(imported, tmp_path):
    run_export(imported, tmp_path / "p", file_format="parquet")
    rows = {r["pair_id"]: r for r in pq.read_table(tmp_path / "p" / "mix.parquet").to_pylist()}
    reasoning = rows["imp-3"]
    assert reasoning["prompt_content"] == "null" and reasoning["prompt_text"] is None
    assert reasoning["prompt_images"] == []
    assert json.loads(reasoning["response_a_grades"]) == ["A", "B"]
    assert json.loads(reasoning["human_annotations"]) == {
        "response_a_ratings": ["A", "B"],
        "response_b_ratings": ["C", "C"],
    }
    assert reasoning["verdicts"] is None  # not asked for
    assert json.loads(rows["imp-1"]["human_annotations"]) == [5, 6, 5]


def test_row_groups_are_bounded_by_rows_and_by_image_bytes(rated, tmp_path, monkeypatch):
    monkeypatch.setattr(parquet, "ROW_GROUP_ROWS", 2)
    export_dataset(rated.project, tmp_path / "rows", file_format="parquet", include_dropped=True)
    groups = pq.ParquetFile(tmp_path / "rows" / "t2i.parquet").metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [2, 2]
    monkeypatch.setattr(parquet, "ROW_GROUP_IMAGE_BYTES", 1)
    export_dataset(rated.project, tmp_path / "bytes", file_format="parquet", include_dropped=True)
    groups = pq.ParquetFile(tmp_path / "bytes" / "t2i.parquet").metadata
    assert [groups.row_group(i).num_rows for i in range(groups.num_row_groups)] == [1, 1, 1, 1]
    # Image bytes are stored as they are (already compressed), without statistics.
    chunks = {
        chunk.path_in_schema: chunk
        for chunk in (groups.row_group(0).column(i) for i in range(groups.num_columns))
    }
    image = chunks["response_a_images.list.element.bytes"]
    assert image.compression == "UNCOMPRESSED" and not image.is_stats_set
    assert chunks["ratings"].compression == "SNAPPY"


def test_hugging_face_datasets_decodes_the_images(rated, tmp_path, monkeypatch):
    monkeypatch.setenv("HF_DATASETS_OFFLINE", "1")
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setenv("HF_HOME", str(tmp_path / "hf"))
    monkeypatch.setenv("HF_DATASETS_CACHE", str(tmp_path / "hf" / "datasets"))
    run_export(rated.project, tmp_path / "p", file_format="parquet")
    import datasets
    from PIL import Image

    loaded = datasets.load_dataset(
        "parquet",
        data_files=str(tmp_path / "p" / "edit.parquet"),
        split="train",
        cache_dir=str(tmp_path / "hf" / "cache"),
    )
    assert loaded.num_rows == 2
    assert isinstance(loaded.features["prompt_images"].feature, datasets.Image)
    first = loaded[0]
    assert first["pair_id"] == "edit-1"
    prompt_image, response_image = first["prompt_images"][0], first["response_a_images"][0]
    assert isinstance(prompt_image, Image.Image) and prompt_image.size == (32, 32)
    assert isinstance(response_image, Image.Image) and response_image.size == (20, 10)
    assert first["response_b_images"][0].size == (24, 16)
    assert first["scale"] == 7 and json.loads(first["human_annotations"]) == []
