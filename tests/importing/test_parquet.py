"""`import_pairs --format parquet`: Arbiter's export layout and MMRB2's Hugging Face layout,
images inside the file, checked and stored by hash; every bad row names its row number."""

import hashlib
import json
import zlib
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from annotation.models import Adjudication, AspectScore, Rating
from content.importing import parquet as parquet_module
from content.importing.errors import ImportFailed
from content.importing.images import StagedImages
from content.models import Asset, Pair
from imports.services.pair_import import pairs_import
from projects.models import Project
from tests.factories import image_bytes, write_jsonl
from tests.importing.helpers import (
    ARBITER_SCHEMA,
    HF_SCHEMA,
    IMAGE_LIST,
    arbiter_parquet_row,
    arbiter_row,
    assert_nothing_written,
    hf_image,
    import_error,
    media_files,
    run_import,
    stored_images,
    table_counts,
    write_parquet,
)

pytestmark = pytest.mark.django_db

RED_PNG = image_bytes((200, 40, 40), size=(24, 16))
BLUE_PNG = image_bytes((40, 40, 200), size=(16, 24))
GREEN_JPEG = image_bytes((40, 200, 40), size=(20, 20), fmt="JPEG")
IMAGES = {"images/a.png": RED_PNG, "images/b.png": BLUE_PNG, "images/c.jpg": GREEN_JPEG}


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def png_claiming(width: int, height: int) -> bytes:
    """A 1×1 PNG whose header says width × height (the CRC fixed): a decompression bomb."""
    data = image_bytes(size=(1, 1))
    header = bytearray(data[12:29])  # chunk type and data of IHDR
    header[4:8] = width.to_bytes(4, "big")
    header[8:12] = height.to_bytes(4, "big")
    return data[:12] + bytes(header) + zlib.crc32(bytes(header)).to_bytes(4, "big") + data[33:]


def interleaved_row(row_id="p1", **extra) -> dict:
    row = arbiter_row(row_id, **extra)
    row["prompt_content"] = [["text", "Look at"], ["image", "images/c.jpg"], ["text", "draw it"]]
    row["response_a"]["response_content"] = [
        ["text", "Here:"],
        ["image", "images/a.png"],
        ["text", "and the same again"],
        ["image", "images/a.png"],
    ]
    row["response_b"]["response_content"] = [["image", "images/b.png"], ["text", "B says"]]
    return row


def write_arbiter(path: Path, rows: list[dict], images=IMAGES, **kwargs) -> Path:
    return write_parquet(
        path, [arbiter_parquet_row(r, images) for r in rows], ARBITER_SCHEMA, **kwargs
    )


def hf_row(pair_id, *, prompt_text="Draw a cat", prompt_images=(), a_text="", b_text="", **kw):
    row = {
        "pair_id": pair_id,
        "prompt_text": prompt_text,
        "prompt_images": [hf_image(d, f"p{i}.png") for i, d in enumerate(prompt_images)],
        "response_a_text": a_text,
        "response_a_images": [hf_image(RED_PNG, "a.png")],
        "response_b_text": b_text,
        "response_b_images": [hf_image(BLUE_PNG, "b.png")],
        "response_a_model": "gen-1",
        "response_b_model": "gen-2",
        "chosen": "A",
        "human_annotations": json.dumps([5, 6, 5]),
        "prompt_source": "hf-test",
        "prompt_metadata": json.dumps({"id": pair_id}),
    }
    row.update(kw)
    return row


# --------------------------------------------------------------------------- Arbiter's layout


def test_export_layout_keeps_interleaving_ratings_and_stores_images_by_hash(
    tmp_path, media_root, import_temp, monkeypatch
):
    staged = []
    original = StagedImages.add

    def spy(self, data, name):
        key = original(self, data, name)
        staged.append(self.folder / key)
        return key

    monkeypatch.setattr(StagedImages, "add", spy)
    adjudicated = interleaved_row("p2", adjudication={"decision": "keep_b", "note": "why"})
    path = write_arbiter(tmp_path / "t2i.parquet", [interleaved_row("p1"), adjudicated])

    summary = run_import(path, file_format="parquet")

    assert (summary["pairs"], summary["ratings"], summary["adjudications"]) == (2, 6, 1)
    assert summary["images"] == {"new": 3, "reused": 0}
    pair = Pair.objects.select_related("prompt", "response_a", "response_b").get(external_id="p1")
    assert pair.prompt.content == [
        ["text", "Look at"],
        ["image", sha(GREEN_JPEG)],
        ["text", "draw it"],
    ]
    assert pair.response_a.content == [
        ["text", "Here:"],
        ["image", sha(RED_PNG)],
        ["text", "and the same again"],
        ["image", sha(RED_PNG)],
    ]
    assert pair.response_b.content == [["image", sha(BLUE_PNG)], ["text", "B says"]]
    assert pair.metadata == {"category": "colour"}
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "consensus")
    p2 = Pair.objects.get(external_id="p2")
    assert (p2.label, p2.decided_by) == ("B", "adjudication")
    assert Adjudication.objects.get().lead.username == "imported-lead-proj"
    assert AspectScore.objects.count() == 6
    assert Rating.objects.filter(annotator__username="imported-proj-r-0123456789ab").count() == 2

    stored = {a.sha256: a for a in Asset.objects.all()}
    assert set(stored) == {sha(RED_PNG), sha(BLUE_PNG), sha(GREEN_JPEG)}
    assert stored[sha(GREEN_JPEG)].format == "JPEG"
    assert (stored[sha(RED_PNG)].width, stored[sha(RED_PNG)].height) == (24, 16)
    for asset in stored.values():
        path = Path(asset.file.path)
        assert path.is_relative_to(media_root)
        assert sha(path.read_bytes()) == asset.sha256
        assert asset.size_bytes == path.stat().st_size
    assert len(stored_images(media_root)) == 3
    # Images were staged on disk by hash inside the import's temporary folder, now gone.
    assert {path.name for path in staged} == set(stored)
    assert all(path.parent.parent == import_temp for path in staged)
    assert list(import_temp.iterdir()) == []


def test_export_parquet_and_jsonl_give_the_same_pairs(tmp_path, export_dir):
    """The same export rows as JSONL (+ images folder) and as Parquet are the same pairs: a
    Parquet import after the JSONL one finds nothing new."""
    for name, data in IMAGES.items():
        (export_dir / name).write_bytes(data)
    rows = [interleaved_row("p1"), interleaved_row("p2", ratings=[], reference_label="B")]
    run_import(write_jsonl(tmp_path / "t2i.jsonl", rows), images=export_dir)
    counts = table_counts()

    summary = run_import(write_arbiter(tmp_path / "t2i.parquet", rows), file_format="parquet")

    assert (summary["pairs"], summary["unchanged"]) == (0, 2)
    assert table_counts() == counts


def test_reimporting_the_same_parquet_file_changes_nothing(tmp_path, media_root, import_temp):
    path = write_arbiter(tmp_path / "t2i.parquet", [interleaved_row("p1")])
    run_import(path, file_format="parquet")
    counts, files = table_counts(), sorted(media_files(media_root))
    summary = run_import(path, file_format="parquet")
    assert (summary["pairs"], summary["unchanged"]) == (0, 1)
    assert table_counts() == counts
    assert sorted(media_files(media_root)) == files
    assert list(import_temp.iterdir()) == []


def test_rows_are_read_in_batches_with_row_numbers_across_them(
    tmp_path, monkeypatch, media_root, import_temp
):
    monkeypatch.setattr(parquet_module, "BATCH_ROWS", 2)
    # Reading the whole table at once is not how the importer reads.
    monkeypatch.setattr(pq, "read_table", None)
    monkeypatch.setattr(pq.ParquetFile, "read", None)
    rows = [interleaved_row(f"p{i}") for i in range(7)]
    path = write_arbiter(tmp_path / "ok.parquet", rows, row_group_size=3)
    summary = run_import(path, file_format="parquet", project="ok")
    assert summary["pairs"] == 7
    assert summary["images"] == {"new": 3, "reused": 0}

    images = {**IMAGES, "images/bad.png": b"not an image at all"}
    rows[5]["response_b"]["response_content"] = [["image", "images/bad.png"]]
    path = write_arbiter(tmp_path / "bad.parquet", rows, images=images, row_group_size=3)
    message = import_error(path, file_format="parquet", project="bad")
    assert "record 6" in message
    assert "'images/bad.png' is not an image" in message
    assert not Project.objects.filter(slug="bad").exists()
    assert list(import_temp.iterdir()) == []


def test_content_naming_an_image_missing_from_the_columns_is_refused(tmp_path, media_root):
    row = interleaved_row("p1")
    parquet_row = arbiter_parquet_row(row, IMAGES)
    parquet_row["response_b_images"] = []
    path = write_parquet(tmp_path / "t.parquet", [parquet_row], ARBITER_SCHEMA)
    message = import_error(path, file_format="parquet")
    assert "record 1" in message
    assert "'images/b.png' is named by the content but is not in the image columns" in message
    assert_nothing_written(media_root)


def test_invalid_json_column_is_refused_with_its_row(tmp_path, media_root):
    rows = [arbiter_parquet_row(interleaved_row(f"p{i}"), IMAGES) for i in range(2)]
    rows[1]["ratings"] = "[{"
    path = write_parquet(tmp_path / "t.parquet", rows, ARBITER_SCHEMA)
    message = import_error(path, file_format="parquet")
    assert "record 2" in message
    assert "column 'ratings' is not valid JSON" in message
    assert_nothing_written(media_root)


def test_ratings_disagreeing_with_human_annotations_in_parquet(tmp_path, media_root):
    row = arbiter_parquet_row(interleaved_row("p1"), IMAGES)
    row["human_annotations"] = json.dumps([1, 1, 1])
    path = write_parquet(tmp_path / "t.parquet", [row], ARBITER_SCHEMA)
    message = import_error(path, file_format="parquet")
    assert "record 1" in message
    assert "differ from human_annotations" in message
    assert_nothing_written(media_root)


# --------------------------------------------------------------------------- Hugging Face layout


def test_hugging_face_layout_text_then_images(tmp_path, media_root):
    rows = [
        hf_row("h1", prompt_images=[GREEN_JPEG], a_text="Answer A"),
        hf_row("h2", prompt_text="", prompt_images=[GREEN_JPEG], human_annotations="[1, 2, 1]"),
        hf_row("h3", prompt_text="", human_annotations=None, chosen="B"),
    ]
    path = write_parquet(tmp_path / "mmrb2.parquet", rows, HF_SCHEMA)

    summary = run_import(path, file_format="parquet", task="edit")

    assert (summary["pairs"], summary["ratings"]) == (3, 6)
    assert Project.objects.get().scale_points == 6  # MMRB2's scale
    h1 = Pair.objects.select_related("prompt", "response_a", "response_b").get(external_id="h1")
    assert h1.prompt.content == [["text", "Draw a cat"], ["image", sha(GREEN_JPEG)]]
    assert h1.prompt.metadata == {"id": "h1"}
    assert h1.source == "hf-test"
    assert h1.response_a.content == [["text", "Answer A"], ["image", sha(RED_PNG)]]
    assert h1.response_b.content == [["image", sha(BLUE_PNG)]]  # empty text: no text part
    assert (h1.status, h1.label) == ("kept", "A")
    h2 = Pair.objects.select_related("prompt").get(external_id="h2")
    assert h2.prompt.content == [["image", sha(GREEN_JPEG)]]
    assert h2.label == "B"
    h3 = Pair.objects.select_related("prompt").get(external_id="h3")
    assert h3.prompt.content is None  # neither text nor images
    assert (h3.label, h3.decided_by, h3.rating_count) == ("B", "imported", 0)
    assert Asset.objects.count() == 3
    assert len(stored_images(media_root)) == 3


def test_hugging_face_reasoning_dict_and_struct_metadata(tmp_path):
    schema = HF_SCHEMA.set(
        HF_SCHEMA.get_field_index("prompt_metadata"),
        pa.field("prompt_metadata", pa.struct([("id", pa.string()), ("split", pa.string())])),
    )
    grades = {"response_a_ratings": ["A", "B"], "response_b_ratings": ["C"]}
    rows = [
        hf_row(
            "r1",
            human_annotations=json.dumps(grades),
            prompt_metadata={"id": "r1", "split": "test"},
        )
    ]
    path = write_parquet(tmp_path / "reasoning.parquet", rows, schema)

    summary = run_import(path, file_format="parquet", task="reasoning")

    assert (summary["ratings"], summary["graded_responses"]) == (0, 2)
    pair = Pair.objects.select_related("prompt", "response_a", "response_b").get()
    assert pair.response_a.imported_grades == ["A", "B"]
    assert pair.response_b.imported_grades == ["C"]
    assert pair.prompt.metadata == {"id": "r1", "split": "test"}
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "imported")


# --------------------------------------------------------------------------- bad images


def _bad_image(case: str, settings) -> tuple[bytes, str]:
    if case == "not-an-image":
        return b"GIF? no, plain text\n", "is not an image"
    if case == "png-claiming-a-huge-size":
        return png_claiming(50_000, 50_000), "decompression bomb"
    if case == "over-the-pixel-limit":
        settings.ARBITER_MAX_IMAGE_PIXELS = 500
        return image_bytes(size=(30, 30)), "above the decompression-bomb limit of 500"
    if case == "gif-not-allowed":
        settings.ARBITER_IMAGE_FORMATS = ["JPEG", "PNG"]
        return image_bytes(fmt="GIF"), "is GIF; allowed: JPEG, PNG"
    if case == "truncated":
        return RED_PNG[: len(RED_PNG) // 2], "cannot be decoded"
    if case == "empty":
        return b"", "empty"
    raise AssertionError(case)


BAD_CASES = [
    "not-an-image",
    "png-claiming-a-huge-size",
    "over-the-pixel-limit",
    "gif-not-allowed",
    "truncated",
    "empty",
]


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_image_in_export_layout_is_refused(tmp_path, settings, media_root, import_temp, case):
    data, expected = _bad_image(case, settings)
    rows = [interleaved_row(f"p{i}") for i in range(3)]
    rows[2]["response_a"]["response_content"] = [["image", "images/x.png"]]
    path = write_arbiter(tmp_path / "t.parquet", rows, images={**IMAGES, "images/x.png": data})

    message = import_error(path, file_format="parquet")

    assert "record 3" in message
    assert expected in message
    assert_nothing_written(media_root)
    assert list(import_temp.iterdir()) == []


@pytest.mark.parametrize("case", BAD_CASES)
def test_bad_image_in_hugging_face_layout_is_refused(
    tmp_path, settings, media_root, import_temp, case
):
    data, expected = _bad_image(case, settings)
    rows = [hf_row("h1"), hf_row("h2"), hf_row("h3", prompt_images=[GREEN_JPEG, data])]
    path = write_parquet(tmp_path / "t.parquet", rows, HF_SCHEMA)

    message = import_error(path, file_format="parquet")

    assert "record 3" in message
    assert "prompt_images[1]" in message
    assert expected in message
    assert_nothing_written(media_root)
    assert list(import_temp.iterdir()) == []


def test_image_with_a_path_but_no_bytes_is_refused(tmp_path, media_root, import_temp):
    rows = [hf_row("h1"), hf_row("h2", response_b_images=[hf_image(None, "/etc/passwd")])]
    path = write_parquet(tmp_path / "t.parquet", rows, HF_SCHEMA)
    message = import_error(path, file_format="parquet")
    assert "record 2" in message
    assert "response_b_images[0] has no bytes (only the path '/etc/passwd')" in message
    assert_nothing_written(media_root)
    assert list(import_temp.iterdir()) == []


def test_image_with_no_bytes_in_export_layout_is_refused(tmp_path, media_root):
    row = arbiter_parquet_row(interleaved_row("p1"), IMAGES)
    row["response_b_images"] = [hf_image(None, "images/b.png")]
    path = write_parquet(tmp_path / "t.parquet", [row], ARBITER_SCHEMA)
    message = import_error(path, file_format="parquet")
    assert "record 1" in message
    assert "has no bytes" in message
    assert_nothing_written(media_root)


def test_null_image_in_list_is_refused(tmp_path, media_root):
    rows = [hf_row("h1", response_a_images=[None])]
    schema = HF_SCHEMA.set(
        HF_SCHEMA.get_field_index("response_a_images"), pa.field("response_a_images", IMAGE_LIST)
    )
    path = write_parquet(tmp_path / "t.parquet", rows, schema)
    message = import_error(path, file_format="parquet")
    assert "record 1" in message
    assert "response_a_images" in message
    assert_nothing_written(media_root)


# --------------------------------------------------------------------------- bad files


def test_images_option_is_refused_with_parquet(tmp_path, export_dir, media_root):
    path = write_parquet(tmp_path / "t.parquet", [hf_row("h1")], HF_SCHEMA)
    message = import_error(path, file_format="parquet", images=export_dir)
    assert "--images is not used with --format parquet" in message
    assert_nothing_written(media_root)


def test_file_that_is_not_parquet_is_refused(tmp_path, media_root, import_temp):
    path = tmp_path / "t.parquet"
    path.write_text('{"id": "not parquet"}\n')
    message = import_error(path, file_format="parquet")
    assert "not a readable Parquet file" in message
    assert_nothing_written(media_root)
    assert list(import_temp.iterdir()) == []


def test_parquet_with_unknown_columns_is_refused(tmp_path, media_root):
    table = pa.table({"id": ["x"], "caption": ["a cat"]})
    pq.write_table(table, tmp_path / "t.parquet")
    message = import_error(tmp_path / "t.parquet", file_format="parquet")
    assert "neither Arbiter's export columns" in message
    assert "missing: chosen" in message
    assert_nothing_written(media_root)


def test_empty_parquet_file_is_refused(tmp_path, media_root):
    path = write_parquet(tmp_path / "t.parquet", [], HF_SCHEMA)
    with pytest.raises(ImportFailed, match="holds no records"):
        pairs_import(path, project_slug="p", task_slug="t", file_format="parquet")
    assert_nothing_written(media_root)
