"""`import_pairs`: the three formats, the summary and image storage."""

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.core.management import call_command

from annotation.models import Rating
from content.models import Asset, Pair, Prompt, Response
from projects.models import Project, Task
from tests.factories import mmrb2_pair, write_image, write_jsonl, write_mmrb2
from tests.importing.helpers import (
    BLUE,
    GREEN,
    RED,
    assert_nothing_written,
    import_error,
    mjbench_row,
    run_import,
    sha256_of,
    stored_images,
)

pytestmark = pytest.mark.django_db


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
    assert r0.metadata == {
        "category": "alignment",
        "subcategory": "count",
        # Where it came from, to match MJ-Bench's result files to it later.
        "origin": {"format": "mjbench", "image_0": "a.png", "image_1": "b.png", "row": 0},
    }
    assert r0.source == "mjbench"
    # MJ-Bench compares two images of one model.
    assert r0.same_model


@pytest.mark.parametrize("label", [2, -1, 0.25, "2", None, True])
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
    assert len(stored_images(media_root)) == 2


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
