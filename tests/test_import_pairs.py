"""`import_pairs`: formats, images, imported ratings and the all-or-nothing guarantee."""

import hashlib
import io
import json
import os
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError
from PIL import Image

from annotation.importing.errors import ImportFailed
from annotation.models import (
    Asset,
    Assignment,
    Generator,
    Pair,
    Project,
    Prompt,
    Rating,
    Response,
    Task,
)
from annotation.services import pair_import
from annotation.services.pair_import import pairs_import
from tests.factories import mmrb2_pair, write_image, write_jsonl, write_mmrb2

pytestmark = pytest.mark.django_db

RED = (200, 40, 40)
BLUE = (40, 40, 200)
GREEN = (40, 200, 40)


# --------------------------------------------------------------------------- helpers


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


@pytest.fixture
def media_root(_media_in_tmp) -> Path:
    """MEDIA_ROOT of this test (a fresh folder, see conftest)."""
    return Path(_media_in_tmp)


@pytest.fixture
def images(tmp_path) -> Path:
    """An --images folder with three distinct PNGs and a prompt image."""
    folder = tmp_path / "images"
    write_image(folder / "a.png", RED)
    write_image(folder / "b.png", BLUE)
    write_image(folder / "c.png", GREEN)
    write_image(folder / "prompt" / "p.png", (10, 10, 10), size=(32, 32))
    return folder


def run_import(path, *, project="proj", task="t2i", file_format="native", images=None, **extra):
    """Run the command with --json and return its summary."""
    out = io.StringIO()
    options = {"project": project, "task": task, "file_format": file_format, "json": True}
    if images is not None:
        options["images"] = str(images)
    options.update(extra)
    call_command("import_pairs", str(path), stdout=out, **options)
    return json.loads(out.getvalue())


def import_error(path, **kwargs) -> str:
    with pytest.raises(CommandError) as excinfo:
        run_import(path, **kwargs)
    return str(excinfo.value)


def media_files(media_root: Path) -> list[Path]:
    root = Path(media_root)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def assert_nothing_written(media_root):
    counts = {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }
    assert counts == dict.fromkeys(counts, 0)
    assert not get_user_model().objects.filter(username__startswith="imported-").exists()
    assert media_files(media_root) == []


def table_counts() -> dict:
    return {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }


def mjbench_row(row_id, label, *, image0="a.png", image1="b.png", **extra) -> dict:
    return {
        "id": row_id,
        "caption": f"caption of {row_id}",
        "image0": image0,
        "image1": image1,
        "label": label,
        **extra,
    }


# --------------------------------------------------------------------------- formats


def test_native_jsonl_with_text_and_image_prompt(tmp_path, images):
    record = mmrb2_pair(
        "n1",
        scores=(5, 6, 5),
        chosen="A",
        prompt=[["text", "Draw a red square"], ["image", "prompt/p.png"]],
    )
    record["response_a"]["response_content"] = [["text", "Here it is:"], ["image", "a.png"]]
    path = write_jsonl(tmp_path / "pairs.jsonl", [record])

    summary = run_import(path, images=images)

    assert summary["pairs"] == 1
    pair = Pair.objects.select_related("prompt", "response_a", "response_b", "task").get()
    assert pair.external_id == "n1"
    assert pair.task.slug == "t2i"
    assert pair.task.kind == Task.Kind.T2I
    assert pair.source == "unit-test"
    prompt_sha = sha256_of(images / "prompt" / "p.png")
    assert pair.prompt.content == [["text", "Draw a red square"], ["image", prompt_sha]]
    assert pair.prompt.is_available
    assert pair.prompt.source == "unit-test"
    assert pair.prompt.metadata == {"id": "n1"}
    assert pair.response_a.content == [
        ["text", "Here it is:"],
        ["image", sha256_of(images / "a.png")],
    ]
    assert pair.response_b.content == [["image", sha256_of(images / "b.png")]]
    assert pair.response_a.generator.name == "gen-1"
    assert pair.response_b.generator.name == "gen-2"
    assert Asset.objects.filter(sha256=prompt_sha, width=32, height=32, format="PNG").exists()
    # MMRB2 scores in a native file: the project gets K = 6.
    assert Project.objects.get(slug="proj").scale_points == 6


def test_native_blank_lines_are_skipped(tmp_path, images):
    text = "\n" + json.dumps(mmrb2_pair("x1")) + "\n\n" + json.dumps(mmrb2_pair("x2")) + "\n"
    path = tmp_path / "pairs.jsonl"
    path.write_text(text)
    assert run_import(path, images=images)["pairs"] == 2
    assert set(Pair.objects.values_list("external_id", flat=True)) == {"x1", "x2"}


@pytest.mark.parametrize("separator", ["\u2028", "\u2029", "\x85"])
def test_jsonl_text_may_hold_unicode_line_separators(tmp_path, images, separator):
    """JSON allows these characters raw inside strings and JSONL separates records by "\\n"
    only, so a line holding one is still a single valid record."""
    text = f"first line{separator}second line"
    record = mmrb2_pair("u1", prompt=[["text", text]])
    path = tmp_path / "pairs.jsonl"
    path.write_text(json.dumps(record, ensure_ascii=False) + "\n", encoding="utf-8")

    summary = run_import(path, images=images)

    assert summary["pairs"] == 1
    assert Prompt.objects.get().content == [["text", text]]


def test_mmrb2_response_only_file_keeps_prompt_source_and_metadata(tmp_path, images):
    pair = mmrb2_pair("m1", scores=(2, 1, 2), chosen="B")
    pair["prompt_source"] = "oneigbench"
    pair["prompt_metadata"] = {"category": "counting", "seed": 7}
    assert "prompt_content" not in pair
    path = write_mmrb2(tmp_path / "t2i_response_only.json", [pair])

    summary = run_import(path, file_format="mmrb2", images=images)

    assert summary["pairs"] == 1
    prompt = Prompt.objects.get()
    assert prompt.content is None
    assert not prompt.is_available
    assert prompt.source == "oneigbench"
    assert prompt.metadata == {"category": "counting", "seed": 7}
    pair_row = Pair.objects.get()
    assert pair_row.prompt == prompt
    assert pair_row.source == "oneigbench"
    assert pair_row.label == "B"
    assert pair_row.status == Pair.Status.KEPT
    assert Project.objects.get().scale_points == 6


def test_mmrb2_record_number_is_position_in_pairs_list(tmp_path, images):
    bad = mmrb2_pair("m2")
    del bad["response_b"]
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("m1"), bad])
    message = import_error(path, file_format="mmrb2", images=images)
    assert "record 2" in message
    assert "response_b" in message


def test_mmrb2_file_that_is_not_a_pairs_object_is_rejected(tmp_path, images, media_root):
    path = tmp_path / "f.json"
    path.write_text(json.dumps([mmrb2_pair("m1")]))
    message = import_error(path, file_format="mmrb2", images=images)
    assert '{"pairs": [...]}' in message
    assert_nothing_written(media_root)


@pytest.mark.parametrize("as_jsonl", [False, True], ids=["json-list", "jsonl"])
def test_mjbench_rows_labels_become_reference_labels(tmp_path, images, as_jsonl):
    rows = [
        mjbench_row("r0", 0, category="alignment", subcategory="count", model="sd-xl"),
        mjbench_row("r1", 1, image0="b.png", image1="c.png"),
        mjbench_row("r2", 0.5, image0="a.png", image1="c.png"),
    ]
    path = tmp_path / ("rows.jsonl" if as_jsonl else "rows.json")
    if as_jsonl:
        write_jsonl(path, rows)
    else:
        path.write_text(json.dumps(rows))

    summary = run_import(path, file_format="mjbench", images=images)

    assert summary["pairs"] == 3
    assert summary["ratings"] == 0
    assert summary["images"] == {"new": 3, "reused": 0}
    pairs = {p.external_id: p for p in Pair.objects.select_related("prompt", "response_a")}
    assert {k: p.reference_label for k, p in pairs.items()} == {"r0": "A", "r1": "B", "r2": "tie"}
    assert {k: p.label for k, p in pairs.items()} == {"r0": "A", "r1": "B", "r2": ""}
    assert {p.decided_by for p in pairs.values()} == {Pair.DecidedBy.IMPORTED}
    r0 = pairs["r0"]
    assert r0.prompt.content == [["text", "caption of r0"]]
    assert r0.response_a.content == [["image", sha256_of(images / "a.png")]]
    assert r0.response_a.generator.name == "sd-xl"
    assert r0.metadata == {"category": "alignment", "subcategory": "count"}
    assert r0.source == "mjbench"
    # MJ-Bench compares two images of one model.
    assert r0.same_model


@pytest.mark.parametrize("label", [2, -1, 0.25, "0", None, True])
def test_mjbench_label_outside_0_1_half_is_rejected(tmp_path, images, label, media_root):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([mjbench_row("r0", 0), mjbench_row("r1", label)]))
    message = import_error(path, file_format="mjbench", images=images)
    assert "record 2" in message
    assert "label" in message
    assert_nothing_written(media_root)


def test_mjbench_missing_caption_names_record(tmp_path, images):
    row = mjbench_row("r1", 1)
    del row["caption"]
    path = write_jsonl(tmp_path / "rows.jsonl", [mjbench_row("r0", 0), row])
    message = import_error(path, file_format="mjbench", images=images)
    assert "record 2" in message
    assert "'caption'" in message


def test_plain_output_without_json(tmp_path, images):
    path = write_jsonl(tmp_path / "pairs.jsonl", [mmrb2_pair("n1"), mmrb2_pair("n2")])
    out = io.StringIO()
    call_command(
        "import_pairs", str(path), project="proj", task="t2i", images=str(images), stdout=out
    )
    text = out.getvalue()
    assert text.startswith("Imported 2 pairs")
    assert "proj/t2i" in text
    assert "6 ratings" in text


# --------------------------------------------------------------------------- summary and images


def test_json_summary_counts_new_and_reused(tmp_path, images):
    shared_prompt = [["text", "one prompt for two pairs"]]
    first = [
        mmrb2_pair("p1", prompt=shared_prompt, image_a="a.png", image_b="b.png"),
        mmrb2_pair("p2", prompt=shared_prompt, image_a="a.png", image_b="c.png"),
        mmrb2_pair("p3", prompt=[["text", "another"]], image_a="b.png", image_b="c.png"),
    ]
    # Same prompt source/metadata for the shared prompt.
    for record in first[:2]:
        record["prompt_metadata"] = {"group": 1}
    path = write_jsonl(tmp_path / "first.jsonl", first)

    summary = run_import(path, images=images)

    assert summary["project"] == "proj"
    assert summary["task"] == "t2i"
    assert summary["format"] == "native"
    assert summary["records"] == 3
    assert summary["pairs"] == 3
    assert summary["unchanged"] == 0
    assert summary["prompts"] == {"new": 2, "reused": 0}
    assert summary["responses"] == 6
    assert summary["images"] == {"new": 3, "reused": 0}
    assert summary["ratings"] == 9
    assert summary["statuses"] == {"kept": 3}
    assert Prompt.objects.count() == 2
    assert Response.objects.count() == 6
    assert Asset.objects.count() == 3
    assert Rating.objects.count() == 9

    # A second file: new ids, one known prompt, two known images and one new one.
    write_image(images / "d.png", (1, 2, 3))
    second = [
        mmrb2_pair("p4", prompt=shared_prompt, image_a="a.png", image_b="d.png", scores=()),
        mmrb2_pair("p5", prompt=[["text", "fresh"]], image_a="b.png", image_b="a.png", scores=()),
    ]
    second[0]["prompt_metadata"] = {"group": 1}
    summary = run_import(write_jsonl(tmp_path / "second.jsonl", second), images=images)

    assert summary["pairs"] == 2
    assert summary["prompts"] == {"new": 1, "reused": 1}
    assert summary["responses"] == 4
    assert summary["images"] == {"new": 1, "reused": 2}
    assert summary["ratings"] == 0
    assert Prompt.objects.count() == 3
    assert Asset.objects.count() == 4
    assert Pair.objects.get(external_id="p4").prompt == Pair.objects.get(external_id="p1").prompt


def test_same_bytes_under_two_names_are_one_asset(tmp_path, images):
    (images / "copy-of-a.png").write_bytes((images / "a.png").read_bytes())
    path = write_jsonl(
        tmp_path / "pairs.jsonl", [mmrb2_pair("d1", image_a="a.png", image_b="copy-of-a.png")]
    )

    summary = run_import(path, images=images)

    assert summary["images"] == {"new": 1, "reused": 0}
    asset = Asset.objects.get()
    pair = Pair.objects.select_related("response_a", "response_b").get()
    assert pair.response_a.content == [["image", asset.sha256]]
    assert pair.response_b.content == [["image", asset.sha256]]
    assert pair.response_a_id != pair.response_b_id


def test_stored_asset_file_is_under_media_root_with_its_sha256(tmp_path, images, media_root):
    path = write_jsonl(tmp_path / "pairs.jsonl", [mmrb2_pair("s1")])
    run_import(path, images=images)

    expected = {sha256_of(images / "a.png"), sha256_of(images / "b.png")}
    assert set(Asset.objects.values_list("sha256", flat=True)) == expected
    for asset in Asset.objects.all():
        stored = Path(asset.file.path)
        assert stored.is_relative_to(Path(media_root))
        assert stored.is_file()
        assert hashlib.sha256(stored.read_bytes()).hexdigest() == asset.sha256
        assert asset.format == "PNG"
        assert (asset.width, asset.height) == (24, 16)
        assert asset.size_bytes == stored.stat().st_size
        assert asset.content_type == "image/png"
    assert len(media_files(media_root)) == 2


def test_jpeg_webp_and_gif_are_accepted(tmp_path, images):
    write_image(images / "j.jpg", RED, fmt="JPEG")
    write_image(images / "w.webp", BLUE, fmt="WEBP")
    write_image(images / "g.gif", GREEN, fmt="GIF")
    records = [
        mmrb2_pair("f1", image_a="j.jpg", image_b="w.webp"),
        mmrb2_pair("f2", image_a="g.gif", image_b="a.png"),
    ]
    run_import(write_jsonl(tmp_path / "pairs.jsonl", records), images=images)
    assert set(Asset.objects.values_list("format", flat=True)) == {"JPEG", "WEBP", "GIF", "PNG"}


# --------------------------------------------------------------------------- bad records


def _bad_image_case(name: str, images: Path, tmp_path: Path, settings) -> tuple[str, str]:
    """Prepare the bad image of a case; return (file name in the record, expected words)."""
    if name == "unknown":
        return "missing.png", "not found"
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
        return "folder.png", "not found"
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
    assert "--images" in message
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
    path.write_text('{"pairs": [\n  {"id": "a"},\n  {"id": \n')
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


# --------------------------------------------------------------------------- scales and ratings


def test_mmrb2_scores_into_project_with_other_k_is_an_error(tmp_path, images, media_root):
    Project.objects.create(slug="seven", name="seven", scale_points=7)
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("k1", scores=(5, 6, 6))])

    message = import_error(path, project="seven", file_format="mmrb2", images=images)

    assert "1..6" in message
    assert "K=7" in message
    assert Project.objects.get().scale_points == 7
    for model in (Task, Pair, Prompt, Response, Asset, Rating, Assignment):
        assert model.objects.count() == 0, model.__name__
    assert media_files(media_root) == []


def test_mmrb2_scores_into_new_project_sets_k6(tmp_path, images):
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("k1", scores=(5, 6, 6))])
    run_import(path, project="fresh", file_format="mmrb2", images=images)
    project = Project.objects.get(slug="fresh")
    assert project.scale_points == 6
    assert project.center == 3.5
    assert set(Rating.objects.values_list("scale", flat=True)) == {6}


def test_mmrb2_scores_into_existing_k6_project_are_accepted(tmp_path, images):
    Project.objects.create(slug="six", name="six", scale_points=6)
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("k1", scores=(1, 2, 1))])
    summary = run_import(path, project="six", file_format="mmrb2", images=images)
    assert summary["ratings"] == 3
    assert Pair.objects.get().label == "B"


def test_native_file_with_own_scale(tmp_path, images):
    record = mmrb2_pair("s7", scores=(7, 6, 7))
    record["scale"] = 7
    run_import(write_jsonl(tmp_path / "p.jsonl", [record]), project="likert7", images=images)
    assert Project.objects.get().scale_points == 7
    pair = Pair.objects.get()
    assert (pair.status, pair.label) == (Pair.Status.KEPT, "A")
    assert sorted(Rating.objects.values_list("overall", flat=True)) == [6, 7, 7]


@pytest.mark.parametrize(
    ("scores", "chosen", "status", "label", "decided_by", "mean"),
    [
        # No ratings: the imported `chosen` is the label of a finished pair.
        ((), "A", "kept", "A", "imported", None),
        ((), "B", "kept", "B", "imported", None),
        # Fewer than N ratings: still being annotated, label from `chosen` meanwhile.
        ((2,), "A", "in_progress", "A", "imported", 2.0),
        ((6, 5), "B", "in_progress", "B", "imported", 5.5),
        # N or more: the consensus decides, whatever `chosen` says.
        ((5, 6, 5), "A", "kept", "A", "consensus", 16 / 3),
        ((5, 6, 5), "B", "kept", "A", "consensus", 16 / 3),
        ((1, 2, 2, 1, 2), "A", "kept", "B", "consensus", 1.6),
        ((6, 6, 5, 6, 6), "", "kept", "A", "consensus", 5.8),
        # Drop rules of MMRB2 (K = 6): mean in [3, 4], or span > 4.
        ((3, 3, 3), "B", "dropped", "B", "consensus", 3.0),
        ((4, 4, 4), "A", "dropped", "A", "consensus", 4.0),
        ((3, 4, 4), "A", "dropped", "A", "consensus", 11 / 3),
        ((3, 3, 4), "B", "dropped", "B", "consensus", 10 / 3),
        ((1, 6, 6), "A", "dropped", "A", "consensus", 13 / 3),
        ((1, 1, 6), "B", "dropped", "B", "consensus", 8 / 3),
        ((3, 4, 3, 4, 3), "B", "dropped", "B", "consensus", 3.4),
        # Just outside the band and span 4: kept.
        ((4, 5, 4), "A", "kept", "A", "consensus", 13 / 3),
        ((2, 3, 3), "B", "kept", "B", "consensus", 8 / 3),
        ((2, 6, 6), "A", "kept", "A", "consensus", 14 / 3),
    ],
)
def test_mmrb2_scores_of_any_length(
    tmp_path, images, scores, chosen, status, label, decided_by, mean
):
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("x", scores=scores, chosen=chosen)])

    summary = run_import(path, file_format="mmrb2", images=images)

    pair = Pair.objects.get()
    assert pair.status == status
    assert pair.label == label
    assert pair.decided_by == decided_by
    assert pair.reference_label == chosen
    assert pair.rating_count == len(scores)
    assert summary["ratings"] == len(scores)
    assert Rating.objects.filter(pair=pair).count() == len(scores)
    if mean is None:
        assert pair.consensus_mean is None
        assert pair.consensus_span is None
    else:
        assert pair.consensus_mean == pytest.approx(mean)
        assert pair.consensus_span == max(scores) - min(scores)
    assert summary["statuses"] == {status: 1}


def test_records_with_different_scales_are_rejected(tmp_path, images, media_root):
    first = mmrb2_pair("a", scores=(5, 5, 5))
    second = mmrb2_pair("b", scores=(5, 5, 5))
    second["scale"] = 7
    message = import_error(write_jsonl(tmp_path / "p.jsonl", [first, second]), images=images)
    assert "different scales [6, 7]" in message
    assert_nothing_written(media_root)


def test_scores_with_other_n(tmp_path, images):
    """With N = 1 a single imported score is already a consensus."""
    Project.objects.create(slug="one", name="one", scale_points=6, annotators_per_pair=1)
    path = write_mmrb2(tmp_path / "f.json", [mmrb2_pair("x", scores=(2,), chosen="A")])
    run_import(path, project="one", file_format="mmrb2", images=images)
    pair = Pair.objects.get()
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "B", "consensus")


def test_imported_ratings_are_on_inactive_placeholders_with_one_assignment_each(tmp_path, images):
    records = [
        mmrb2_pair("r1", scores=(5, 6, 4)),
        mmrb2_pair("r2", scores=(1, 2, 1, 2, 1), chosen="B"),
        mmrb2_pair("r3", scores=()),
    ]
    run_import(write_mmrb2(tmp_path / "f.json", records), file_format="mmrb2", images=images)

    assert Rating.objects.count() == 8
    assert Assignment.objects.count() == 8
    raters = get_user_model().objects.filter(ratings__isnull=False).distinct()
    assert raters.count() == 5
    for user in raters:
        assert not user.is_active
        assert not user.has_usable_password()
    for rating in Rating.objects.select_related("assignment"):
        assert rating.imported
        assert rating.scale == 6
        assert rating.assignment.pair_id == rating.pair_id
        assert rating.assignment.annotator_id == rating.annotator_id
        assert rating.assignment.status == Assignment.Status.SUBMITTED
    r1 = Pair.objects.get(external_id="r1")
    assert sorted(r1.ratings.values_list("overall", flat=True)) == [4, 5, 6]
    # Position i of each score list is the same placeholder rater.
    r1_first = r1.ratings.get(overall=5).annotator
    r2_first = Pair.objects.get(external_id="r2").ratings.order_by("id").first().annotator
    assert r1_first == r2_first

    # A later import into the same project reuses the placeholders.
    more = [mmrb2_pair("r4", scores=(6, 6, 6))]
    run_import(write_mmrb2(tmp_path / "g.json", more), file_format="mmrb2", images=images)
    assert get_user_model().objects.filter(ratings__isnull=False).distinct().count() == 5


def test_reasoning_grades_are_kept_per_response(tmp_path, images):
    record = mmrb2_pair("g1", chosen="A")
    record["human_annotations"] = {
        "response_a_ratings": ["B", "B", "A"],
        "response_b_ratings": ["C"],
    }
    other = mmrb2_pair("g2", chosen="B")
    other["human_annotations"] = {"response_a_ratings": [], "response_b_ratings": ["A"]}
    path = write_mmrb2(tmp_path / "reasoning.json", [record, other])

    summary = run_import(path, task="reasoning", file_format="mmrb2", images=images)

    assert summary["ratings"] == 0
    assert summary["graded_responses"] == 3
    g1 = Pair.objects.select_related("response_a", "response_b").get(external_id="g1")
    assert g1.response_a.imported_grades == ["B", "B", "A"]
    assert g1.response_b.imported_grades == ["C"]
    g2 = Pair.objects.select_related("response_a", "response_b").get(external_id="g2")
    assert g2.response_a.imported_grades == []
    assert g2.response_b.imported_grades == ["A"]
    assert (g1.status, g1.label, g1.decided_by) == ("kept", "A", "imported")
    assert (g2.status, g2.label) == ("kept", "B")
    assert Rating.objects.count() == 0
    assert Pair.objects.first().task.kind == Task.Kind.REASONING


@pytest.mark.parametrize(
    "annotations",
    [
        {"response_a_ratings": ["B"], "extra": []},
        {"response_a_ratings": "B"},
        {"response_a_ratings": ["B", ""]},
    ],
)
def test_bad_reasoning_grades_are_rejected(tmp_path, images, annotations, media_root):
    record = mmrb2_pair("g1")
    record["human_annotations"] = annotations
    path = write_mmrb2(tmp_path / "reasoning.json", [mmrb2_pair("ok"), record])
    message = import_error(path, file_format="mmrb2", images=images)
    assert "record 2" in message
    assert "human_annotations" in message
    assert_nothing_written(media_root)


def test_same_model_flag(tmp_path, images):
    records = [
        mmrb2_pair("same", model_a="flux", model_b="flux"),
        mmrb2_pair("cross", model_a="flux", model_b="imagen"),
    ]
    run_import(write_jsonl(tmp_path / "p.jsonl", records), images=images)
    assert Pair.objects.get(external_id="same").same_model is True
    assert Pair.objects.get(external_id="cross").same_model is False
    assert set(Generator.objects.values_list("name", flat=True)) == {"flux", "imagen"}


def test_as_candidates_keeps_label_but_enters_pipeline(tmp_path, images):
    records = [mmrb2_pair("c1", scores=(), chosen="A"), mmrb2_pair("c2", scores=(), chosen="B")]
    path = write_jsonl(tmp_path / "p.jsonl", records)

    summary = run_import(path, images=images, as_candidates=True)

    assert summary["statuses"] == {"candidate": 2}
    c1 = Pair.objects.get(external_id="c1")
    assert (c1.status, c1.reference_label, c1.label) == ("candidate", "A", "A")
    assert Pair.objects.get(external_id="c2").reference_label == "B"


def test_without_as_candidates_unlabelled_records_are_candidates(tmp_path, images):
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("u1", scores=(), chosen="")])
    run_import(path, images=images)
    pair = Pair.objects.get()
    assert (pair.status, pair.label, pair.decided_by) == ("candidate", "", "")


# --------------------------------------------------------------------------- re-import


def test_reimporting_the_same_file_changes_nothing(tmp_path, images, media_root):
    records = [
        mmrb2_pair("i1", prompt=[["text", "hi"], ["image", "prompt/p.png"]]),
        mmrb2_pair("i2", scores=(1, 2, 2), chosen="B"),
        mmrb2_pair("i3", scores=()),
    ]
    path = write_mmrb2(tmp_path / "f.json", records)
    first = run_import(path, file_format="mmrb2", images=images)
    counts = table_counts()
    files = sorted(media_files(media_root))
    users = get_user_model().objects.count()

    second = run_import(path, file_format="mmrb2", images=images)

    assert first["pairs"] == 3
    assert second["pairs"] == 0
    assert second["unchanged"] == 3
    assert second["ratings"] == 0
    assert second["responses"] == 0
    assert second["images"]["new"] == 0
    assert second["prompts"]["new"] == 0
    assert table_counts() == counts
    assert sorted(media_files(media_root)) == files
    assert get_user_model().objects.count() == users


def test_reimporting_mjbench_rows_changes_nothing(tmp_path, images):
    path = tmp_path / "rows.json"
    path.write_text(json.dumps([mjbench_row("r0", 0), mjbench_row("r1", 0.5)]))
    run_import(path, file_format="mjbench", images=images)
    counts = table_counts()
    summary = run_import(path, file_format="mjbench", images=images)
    assert (summary["pairs"], summary["unchanged"]) == (0, 2)
    assert table_counts() == counts


def test_reimport_with_one_new_record_adds_only_it(tmp_path, images):
    run_import(write_jsonl(tmp_path / "a.jsonl", [mmrb2_pair("i1")]), images=images)
    records = [mmrb2_pair("i1"), mmrb2_pair("i2", image_b="c.png")]
    summary = run_import(write_jsonl(tmp_path / "b.jsonl", records), images=images)
    assert (summary["pairs"], summary["unchanged"]) == (1, 1)
    assert summary["images"] == {"new": 1, "reused": 1}
    assert Pair.objects.count() == 2
    assert Rating.objects.count() == 6


@pytest.mark.parametrize(
    "change",
    ["chosen", "scores", "image", "model", "prompt"],
)
def test_changed_record_with_existing_id_is_an_error(tmp_path, images, change, media_root):
    run_import(write_jsonl(tmp_path / "a.jsonl", [mmrb2_pair("i1")]), images=images)
    counts = table_counts()
    files = sorted(media_files(media_root))
    changed = mmrb2_pair("i1")
    if change == "chosen":
        changed["chosen"] = "B"
    elif change == "scores":
        changed["human_annotations"] = [5, 5, 5]
    elif change == "image":
        changed["response_b"]["response_content"] = [["image", "c.png"]]
    elif change == "model":
        changed["response_a"]["model_name"] = "someone-else"
    else:
        changed["prompt_metadata"] = {"id": "other"}
    records = [mmrb2_pair("new-one", image_b="c.png"), changed]

    message = import_error(write_jsonl(tmp_path / "b.jsonl", records), images=images)

    assert "record 2" in message
    assert "'i1'" in message
    assert "different content" in message
    assert table_counts() == counts
    assert sorted(media_files(media_root)) == files


def test_same_id_in_another_project_is_independent(tmp_path, images):
    path = write_jsonl(tmp_path / "a.jsonl", [mmrb2_pair("i1")])
    run_import(path, project="one", images=images)
    summary = run_import(path, project="two", images=images)
    assert summary["pairs"] == 1
    assert summary["images"] == {"new": 0, "reused": 2}  # assets are global, stored once
    assert Pair.objects.filter(external_id="i1").count() == 2
    assert Asset.objects.count() == 2


# --------------------------------------------------------------------------- service


def test_service_reports_record_number_on_exception(tmp_path, images):
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("a"), mmrb2_pair("b", image_a="zz.png")])
    with pytest.raises(ImportFailed) as excinfo:
        pairs_import(path, project_slug="svc", task_slug="t2i", images_dir=images)
    assert excinfo.value.record == 2
    assert "zz.png" in excinfo.value.detail


def test_service_summary_matches_database(tmp_path, images):
    path = write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("a"), mmrb2_pair("b", image_b="c.png")])
    summary = pairs_import(path, project_slug="svc", task_slug="edit", images_dir=images)
    assert summary.pairs == Pair.objects.count() == 2
    assert summary.ratings == Rating.objects.count() == 6
    assert summary.images_new == Asset.objects.count() == 3
    assert Task.objects.get().kind == Task.Kind.EDIT


def test_unknown_task_slug_becomes_other_kind(tmp_path, images):
    run_import(write_jsonl(tmp_path / "p.jsonl", [mmrb2_pair("a")]), task="my-task", images=images)
    task = Task.objects.get()
    assert (task.slug, task.kind) == ("my-task", Task.Kind.OTHER)
