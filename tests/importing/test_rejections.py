"""`import_pairs`: every bad record or image stops the import and writes nothing."""

import io
import json
import os
from pathlib import Path

import pytest
from PIL import Image

from content.importing.errors import ImportFailed
from content.models import Asset, Pair
from imports.services import pair_import
from tests.factories import mmrb2_pair, write_image, write_jsonl
from tests.importing.helpers import (
    BLUE,
    GREEN,
    RED,
    assert_nothing_written,
    import_error,
    media_files,
    mjbench_row,
    run_import,
    sha256_of,
    table_counts,
)

pytestmark = pytest.mark.django_db


# --------------------------------------------------------------------------- bad records


def _bad_image_case(name: str, images: Path, tmp_path: Path, settings) -> tuple[str, str]:
    """Prepare the bad image of a case; return (file name in the record, expected words)."""
    if name == "unknown":
        return "missing.png", "is not among the images"
    if name == "not-an-image":
        (images / "x.png").write_text("this is plain text, not a PNG\n")
        return "x.png", "is not an image"
    if name == "small-bomb":
        settings.ARBITER_MAX_IMAGE_PIXELS = 100
        for name, color in (("a.png", RED), ("b.png", BLUE), ("c.png", GREEN)):
            write_image(images / name, color, size=(10, 10))  # exactly at the limit: fine
        write_image(images / "twenty.png", size=(20, 20))
        return "twenty.png", "decompression-bomb"
    if name == "real-bomb":
        Image.new("1", (9000, 9000)).save(images / "bomb.png", "PNG")
        # Tiny on disk, 81 megapixels once decoded: above the default 64 MP limit.
        assert (images / "bomb.png").stat().st_size < 50_000
        return "bomb.png", "decompression-bomb"
    if name == "dotdot":
        write_image(tmp_path / "outside.png")
        return "../outside.png", "leaves the images folder"
    if name == "backslash":
        write_image(tmp_path / "outside.png")
        return "..\\outside.png", "leaves the images folder"
    if name == "huge-bomb":
        # 400 megapixels: above Pillow's own hard limit, refused while opening.
        Image.new("1", (20000, 20000)).save(images / "huge.png", "PNG")
        return "huge.png", "decompression"
    if name == "dotdot-inside":
        write_image(tmp_path / "outside.png")
        return "prompt/../../outside.png", "leaves the images folder"
    if name == "absolute":
        outside = write_image(tmp_path / "outside.png")
        return str(outside.resolve()), "leaves the images folder"
    if name == "symlink":
        outside = write_image(tmp_path / "elsewhere" / "secret.png")
        os.symlink(outside, images / "link.png")
        return "link.png", "leaves the images folder"
    if name == "bmp":
        write_image(images / "x.bmp", fmt="BMP")
        return "x.bmp", "BMP"
    if name == "tiff":
        write_image(images / "x.tiff", fmt="TIFF")
        return "x.tiff", "TIFF"
    if name == "truncated":
        noise = Image.frombytes("RGB", (64, 64), os.urandom(64 * 64 * 3))
        buffer = io.BytesIO()
        noise.save(buffer, "PNG")
        data = buffer.getvalue()
        (images / "half.png").write_bytes(data[: len(data) // 2])
        return "half.png", "cannot be decoded"
    if name == "empty":
        (images / "empty.png").write_bytes(b"")
        return "empty.png", "empty"
    if name == "directory":
        (images / "folder.png").mkdir()
        return "folder.png", "is not among the images"
    raise AssertionError(name)


BAD_IMAGES = [
    "unknown",
    "not-an-image",
    "small-bomb",
    "real-bomb",
    "huge-bomb",
    "dotdot",
    "backslash",
    "dotdot-inside",
    "absolute",
    "symlink",
    "bmp",
    "tiff",
    "truncated",
    "empty",
    "directory",
]


@pytest.mark.parametrize("case", BAD_IMAGES)
def test_bad_image_in_late_record_stops_import(tmp_path, images, settings, case, media_root):
    name, expected = _bad_image_case(case, images, tmp_path, settings)
    records = [
        mmrb2_pair("ok1", image_a="a.png", image_b="b.png"),
        mmrb2_pair("ok2", image_a="b.png", image_b="c.png"),
        mmrb2_pair("bad", image_a="a.png", image_b=name),
    ]
    path = write_jsonl(tmp_path / "pairs.jsonl", records)

    message = import_error(path, images=images)

    assert "record 3" in message
    assert expected in message
    assert "nothing written" in message
    assert_nothing_written(media_root)


def test_bomb_in_prompt_image_of_mjbench_row(tmp_path, images, settings, media_root):
    settings.ARBITER_MAX_IMAGE_PIXELS = 100
    write_image(images / "a.png", size=(5, 5))
    write_image(images / "big.png", size=(20, 20))
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([mjbench_row("r0", 0, image0="big.png", image1="a.png")]))
    message = import_error(path, file_format="mjbench", images=images)
    assert "record 1" in message
    assert "20×20" in message
    assert_nothing_written(media_root)


def test_image_is_stored_under_its_real_format_not_its_name(tmp_path, images):
    write_image(images / "photo.png", RED, fmt="JPEG")
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("j", image_a="photo.png")])
    run_import(path, images=images)
    asset = Asset.objects.get(sha256=sha256_of(images / "photo.png"))
    assert asset.format == "JPEG"
    assert asset.content_type == "image/jpeg"
    assert asset.file.name.endswith(".jpg")


def test_image_within_pixel_limit_is_accepted(tmp_path, images, settings):
    settings.ARBITER_MAX_IMAGE_PIXELS = 400
    write_image(images / "twenty.png", size=(20, 20))
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("ok", image_b="twenty.png")])
    assert run_import(path, images=images)["pairs"] == 1


def test_image_above_byte_limit_is_rejected(tmp_path, images, settings, media_root):
    settings.ARBITER_MAX_IMAGE_BYTES = 10
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("big")])
    message = import_error(path, images=images)
    assert "record 1" in message
    assert "above the 10 limit" in message
    assert_nothing_written(media_root)


def test_image_without_images_folder_is_an_error(tmp_path, media_root):
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("x")])
    message = import_error(path)
    assert "record 1" in message
    assert "no images came with the file" in message
    assert_nothing_written(media_root)


def _record_with(problem: str) -> str:
    """One JSONL line carrying the given problem."""
    record = mmrb2_pair("bad")
    if problem == "invalid-json":
        return '{"id": "bad", "response_a": '
    if problem == "not-an-object":
        return json.dumps(["bad"])
    if problem == "missing-id":
        del record["id"]
    elif problem == "missing-response":
        del record["response_a"]
    elif problem == "missing-model-name":
        del record["response_b"]["model_name"]
    elif problem == "missing-content":
        del record["response_a"]["response_content"]
    elif problem == "bad-part":
        record["response_a"]["response_content"] = [["video", "x.mp4"]]
    elif problem == "score-7":
        record["human_annotations"] = [5, 7, 6]
    elif problem == "score-0":
        record["human_annotations"] = [0, 5, 6]
    elif problem == "score-string":
        record["human_annotations"] = [5, "6", 5]
    elif problem == "score-float":
        record["human_annotations"] = [5, 5.5, 5]
    elif problem == "score-bool":
        record["human_annotations"] = [True, 5, 5]
    elif problem == "bad-chosen":
        record["chosen"] = "C"
    elif problem == "duplicate-id":
        record["id"] = "ok1"
    else:
        raise AssertionError(problem)
    return json.dumps(record)


RECORD_PROBLEMS = {
    "invalid-json": "invalid JSON",
    "not-an-object": "JSON object",
    "missing-id": "missing field 'id'",
    "missing-response": "missing field 'response_a'",
    "missing-model-name": "missing field 'model_name'",
    "missing-content": "response_a.response_content",
    "bad-part": "response_a.response_content[0]",
    "score-7": "outside the scale 1..6",
    "score-0": "outside the scale 1..6",
    "score-string": "'6' is not an integer",
    "score-float": "5.5 is not an integer",
    "score-bool": "is not an integer",
    "bad-chosen": "chosen='C'",
    "duplicate-id": "duplicate id 'ok1'",
}


@pytest.mark.parametrize("problem", list(RECORD_PROBLEMS))
def test_bad_record_names_its_number_and_writes_nothing(tmp_path, images, problem, media_root):
    lines = [
        json.dumps(mmrb2_pair("ok1")),
        json.dumps(mmrb2_pair("ok2", image_b="c.png")),
        _record_with(problem),
    ]
    path = tmp_path / "pairs.jsonl"
    path.write_text("\n".join(lines) + "\n")

    message = import_error(path, images=images)

    assert "record 3" in message
    assert RECORD_PROBLEMS[problem] in message
    assert_nothing_written(media_root)


def test_duplicate_id_message_points_at_first_occurrence(tmp_path, images):
    records = [mmrb2_pair("a1"), mmrb2_pair("dup"), mmrb2_pair("a2"), mmrb2_pair("dup")]
    message = import_error(write_jsonl(tmp_path / "p.jsonl", records), images=images)
    assert "record 4" in message
    assert "first seen in record 2" in message


def test_invalid_json_in_mmrb2_file_names_the_line(tmp_path, media_root):
    path = tmp_path / "f.json"
    path.write_text('{"pairs": [\n  {"id": "a",\n  "b": \n')
    message = import_error(path, file_format="mmrb2")
    assert "invalid JSON" in message
    assert "line 4" in message
    assert_nothing_written(media_root)


def test_invalid_project_slug_is_an_error(tmp_path, images, media_root):
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("a")])
    message = import_error(path, project="not a slug!", images=images)
    assert "nothing written" in message
    assert_nothing_written(media_root)


def test_empty_file_is_an_error(tmp_path, media_root):
    path = tmp_path / "empty.jsonl"
    path.write_text("\n\n")
    message = import_error(path)
    assert "no records" in message
    assert_nothing_written(media_root)


def test_missing_file_is_an_error(tmp_path, media_root):
    message = import_error(tmp_path / "nope.jsonl")
    assert "cannot read" in message
    assert_nothing_written(media_root)


def test_non_utf8_file_is_an_error(tmp_path, media_root):
    path = tmp_path / "latin1.jsonl"
    path.write_bytes(b'{"id": "caf\xe9"}\n')
    message = import_error(path)
    assert "not UTF-8" in message
    assert_nothing_written(media_root)


def test_failure_while_writing_rolls_back_rows_and_files(tmp_path, images, monkeypatch, media_root):
    """A failure after assets were copied and pairs inserted leaves nothing behind."""
    original = pair_import._write_ratings

    def write_then_fail(*args, **kwargs):
        written = original(*args, **kwargs)
        assert written == 6 and media_files(media_root)  # the late stage was really reached
        raise ImportFailed("simulated failure in the last step")

    monkeypatch.setattr(pair_import, "_write_ratings", write_then_fail)
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("w1"), mmrb2_pair("w2", image_b="c.png")])

    message = import_error(path, images=images)

    assert "simulated failure" in message
    assert_nothing_written(media_root)


def test_failed_import_into_existing_project_keeps_earlier_data(tmp_path, images, media_root):
    run_import(write_jsonl(tmp_path / "first.jsonl", [mmrb2_pair("e1")]), images=images)
    before = table_counts()
    files_before = sorted(media_files(media_root))
    (images / "x.png").write_text("not an image")

    records = [mmrb2_pair("e2", image_b="c.png"), mmrb2_pair("e3", image_b="x.png")]
    message = import_error(write_jsonl(tmp_path / "second.jsonl", records), images=images)

    assert "record 2" in message
    assert table_counts() == before
    assert sorted(media_files(media_root)) == files_before
    assert not Pair.objects.filter(external_id="e2").exists()


@pytest.mark.parametrize(
    ("text", "words"),
    [("a\u0000b", "NUL character"), ("lone \ud800 surrogate", "unpaired surrogate")],
)
@pytest.mark.parametrize("field", ["prompt_metadata", "model_name", "text_part", "id"])
def test_text_no_database_stores_is_refused_with_its_record(
    tmp_path, images, media_root, text, words, field
):
    bad = mmrb2_pair("p2")
    if field == "prompt_metadata":
        bad["prompt_metadata"] = {"note": text}
    elif field == "model_name":
        bad["response_b"]["model_name"] = text
    elif field == "text_part":
        bad["response_a"]["response_content"].append(["text", text])
    else:
        bad["id"] = text
    # json.dumps escapes both as \u0000 / \ud800: valid JSON that no database column stores.
    path = write_jsonl(tmp_path / "pairs.jsonl", [mmrb2_pair("p1"), bad])
    message = import_error(path, images=images)
    assert "record 2" in message and words in message
    assert_nothing_written(media_root)
