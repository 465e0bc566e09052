"""The export folder: images once by hash, a manifest whose checksums match, refusals that
leave nothing behind, and the command's output."""

import io
import json

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from content.models import Asset, Pair
from exports.errors import ExportInvalid
from exports.writer import export_dataset
from tests.exporting.helpers import files_under, jsonl_rows, manifest_of, run_export, sha256_of

pytestmark = pytest.mark.django_db


def _image_paths(rows) -> list[str]:
    return [
        value
        for row in rows
        for parts in (
            row["prompt_content"] or [],
            row["response_a"]["response_content"],
            row["response_b"]["response_content"],
        )
        for kind, value in parts
        if kind == "image"
    ]


def test_images_are_written_once_by_hash_and_referenced_by_path(rated, tmp_path):
    out = tmp_path / "out"
    summary = run_export(rated.project, out)
    rows = jsonl_rows(out, "t2i") + jsonl_rows(out, "edit")
    named = _image_paths(rows)
    # edit-1 and edit-2 show the same prompt image and the same image as response A.
    assert len(named) == 3 * 2 + 2 * 3 and len(set(named)) == 6 + 4
    written = sorted(p for p in files_under(out) if p.startswith("images/"))
    assert written == sorted(set(named))
    assert summary["images"] == len(written)
    for path in written:
        sha256 = path.removeprefix("images/").removesuffix(".png")
        assert sha256_of(out / path) == sha256
        assert Asset.objects.filter(sha256=sha256).exists()


def test_manifest_lists_every_file_with_its_checksum(rated, tmp_path):
    out = tmp_path / "out"
    summary = run_export(rated.project, out, include_dropped=True)
    manifest = manifest_of(out)
    assert (manifest["format"], manifest["version"], manifest["file_format"]) == (
        "arbiter-dataset",
        1,
        "jsonl",
    )
    assert manifest["options"] == {"task": None, "include_dropped": True, "with_verdicts": False}
    assert set(manifest["files"]) == files_under(out) - {"manifest.json"}
    for path, entry in manifest["files"].items():
        assert entry == {"sha256": sha256_of(out / path), "bytes": (out / path).stat().st_size}
    assert summary["files"] == len(files_under(out))
    assert [(t["slug"], t["pairs"], t["file"]) for t in manifest["tasks"]] == [
        ("edit", 2, "edit.jsonl"),
        ("t2i", 4, "t2i.jsonl"),
    ]
    assert manifest["tasks"][1]["aspects"][0]["key"] == "faithfulness"
    assert manifest["project"]["slug"] == "exp" and manifest["project"]["scale_points"] == 7
    assert manifest["counts"] == {
        "pairs": 6,
        "ratings": 12,
        "images": 12,
        "by_status": {"dropped": 1, "kept": 5},
        "by_decided_by": {"adjudication": 1, "consensus": 3, "imported": 2},
    }
    t2i = manifest["agreement"]["t2i"]
    assert t2i["ratings"] == 12 and t2i["rated_pairs"] == 4
    assert -1 <= t2i["alpha_ordinal"] <= 1 and "faithfulness" in t2i["aspects"]
    assert manifest["agreement"]["edit"]["alpha_ordinal"] is None


def test_a_non_empty_folder_is_refused_and_left_alone(rated, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    (out / "notes.txt").write_text("mine")
    with pytest.raises(ExportInvalid, match="not empty"):
        export_dataset(rated.project, out)
    assert files_under(out) == {"notes.txt"}
    empty = tmp_path / "empty"
    empty.mkdir()
    export_dataset(rated.project, empty)  # an empty folder is fine
    assert (empty / "manifest.json").is_file()


@pytest.mark.parametrize(
    ("options", "message"),
    [({"task_slug": "nope"}, "no task 'nope'"), ({"file_format": "csv"}, "unknown format")],
)
def test_unknown_task_or_format_is_refused(rated, tmp_path, options, message):
    with pytest.raises(ExportInvalid, match=message):
        export_dataset(rated.project, tmp_path / "out", **options)
    assert list(tmp_path.glob("*out*")) == []


def test_a_failure_midway_leaves_nothing(rated, tmp_path, settings):
    # The last task written (t2i) shows an image whose file has gone from media storage.
    asset = Asset.objects.get(sha256=rated.pairs[3].response_b.content[0][1])
    (settings.MEDIA_ROOT / asset.file.name).unlink()
    with pytest.raises(ExportInvalid, match="missing from media storage"):
        export_dataset(rated.project, tmp_path / "out")
    assert list(tmp_path.glob("*out*")) == []


def test_a_damaged_image_is_refused(rated, tmp_path, settings):
    asset = Asset.objects.get(sha256=rated.pairs[0].response_b.content[0][1])
    (settings.MEDIA_ROOT / asset.file.name).write_bytes(b"not the image")
    for file_format in ("jsonl", "parquet"):
        with pytest.raises(ExportInvalid, match="does not match its hash"):
            export_dataset(rated.project, tmp_path / "out", file_format=file_format)
    assert list(tmp_path.glob("*out*")) == []


def test_command_prints_a_summary(rated, tmp_path):
    stdout = io.StringIO()
    call_command("export_dataset", project="exp", out=str(tmp_path / "a"), stdout=stdout)
    line = stdout.getvalue().strip()
    assert line.startswith("Exported 5 pairs, 9 ratings and 10 images of exp") and "\n" not in line
    summary = run_export(rated.project, tmp_path / "b", task="t2i", with_verdicts=True)
    assert summary["pairs"] == 3 and summary["ratings"] == 9 and summary["format"] == "jsonl"
    assert summary["out"] == str(tmp_path / "b")
    assert json.loads(json.dumps(summary)) == summary


def test_command_errors(rated, tmp_path):
    with pytest.raises(CommandError, match="project 'nope' does not exist"):
        call_command("export_dataset", project="nope", out=str(tmp_path / "x"))
    with pytest.raises(CommandError, match="no task 'nope'"):
        call_command("export_dataset", project="exp", out=str(tmp_path / "x"), task="nope")
    assert not (tmp_path / "x").exists()
    (tmp_path / "a-file").write_text("")
    with pytest.raises(CommandError, match="is not a folder"):
        call_command("export_dataset", project="exp", out=str(tmp_path / "a-file"))
    with pytest.raises(CommandError, match="cannot write beside"):
        call_command("export_dataset", project="exp", out=str(tmp_path / "a-file" / "x"))


def test_pairs_still_open_are_not_exported(rated, tmp_path):
    Pair.objects.filter(task__slug="edit").update(status=Pair.Status.QUEUED)
    summary = run_export(rated.project, tmp_path / "out", include_dropped=True)
    assert summary["tasks"]["edit"] == {"pairs": 0, "ratings": 0}
    # A task with nothing to export gets no file, never an empty one; the manifest says so.
    assert not (tmp_path / "out" / "edit.jsonl").exists()
    tasks = {task["slug"]: task for task in manifest_of(tmp_path / "out")["tasks"]}
    assert tasks["edit"]["pairs"] == 0 and tasks["edit"]["file"] is None
    assert tasks["t2i"]["file"] == "t2i.jsonl" and (tmp_path / "out" / "t2i.jsonl").exists()
