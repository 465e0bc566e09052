"""Hostile pair and prediction files are refused with ImportFailed (a clean CLI error, a 400 in
the API), nothing written: Parquet decompression bombs (refused from the metadata before a page
is unpacked, or while reading when the metadata undersells), texts above
ARBITER_MAX_TEXT_CHARS in every format, JSON nested past MAX_JSON_DEPTH (refused before
json.loads would recurse)."""

import json
import os
import random
import string
import subprocess
import sys
import textwrap
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from django.core.management.base import CommandError

from content.importing.upload_limits import MAX_JSON_DEPTH, json_too_deep
from judging.models import Verdict
from projects.models import Project
from tests.factories import image_bytes, write_jsonl
from tests.importing.helpers import (
    ARBITER_SCHEMA,
    HF_SCHEMA,
    arbiter_parquet_row,
    arbiter_row,
    assert_nothing_written,
    hf_image,
    import_error,
    mjbench_row,
    rating,
    run_import,
    write_parquet,
)

pytestmark = pytest.mark.django_db

RED_PNG = image_bytes((200, 40, 40), size=(24, 16))
BLUE_PNG = image_bytes((40, 40, 200), size=(16, 24))
DEEP = "[" * 100_000


def hf_row(pair_id, prompt_text="Draw a cat", **extra) -> dict:
    row = {
        "pair_id": pair_id,
        "prompt_text": prompt_text,
        "prompt_images": [],
        "response_a_text": "",
        "response_a_images": [hf_image(RED_PNG, "a.png")],
        "response_b_text": "",
        "response_b_images": [hf_image(BLUE_PNG, "b.png")],
        "response_a_model": "gen-1",
        "response_b_model": "gen-2",
        "chosen": "A",
        "human_annotations": json.dumps([5, 6, 5]),
        "prompt_source": "hf-test",
        "prompt_metadata": json.dumps({"id": pair_id}),
    }
    row.update(extra)
    return row


def write_hf(path: Path, rows: list[dict], **options) -> Path:
    table = pa.Table.from_pylist(rows, schema=HF_SCHEMA)
    pq.write_table(table, path, **options)
    return path


def text_pair(pair_id: str, text: str = "short") -> dict:
    return {
        "id": pair_id,
        "prompt_source": "unit",
        "prompt_content": [["text", "a prompt"]],
        "response_a": {"model_name": "gen-1", "response_content": [["text", "A"]]},
        "response_b": {"model_name": "gen-2", "response_content": [["text", text]]},
    }


# --------------------------------------------------------------------------- Parquet bombs


def test_a_zstd_bomb_is_refused_from_the_metadata(tmp_path, media_root, import_temp):
    path = write_hf(tmp_path / "bomb.parquet", [hf_row("p1", "x" * 20_000_000)], compression="zstd")
    assert path.stat().st_size < 100_000  # 20 MB of text in a few KB
    message = import_error(path, file_format="parquet")
    assert "column 'prompt_text' of rows 1..1 unpacks" in message
    assert "above the 200:1 limit (a Parquet bomb?)" in message
    assert_nothing_written(media_root)
    assert list(import_temp.iterdir()) == []


def test_refusing_a_bomb_unpacks_nothing(tmp_path):
    """Peak Arrow memory, in a fresh process, while a 60 MB-in-12-KB file is refused: the
    refusal comes from the metadata, so the page is never unpacked (today's reader unpacked
    it whole, then copied it into a Python string)."""
    path = write_hf(tmp_path / "bomb.parquet", [hf_row("p1", "y" * 60_000_000)], compression="zstd")
    script = textwrap.dedent(
        f"""
        import django, pyarrow, resource
        from pathlib import Path
        django.setup()
        from content.importing.errors import ImportFailed
        from content.importing.images import StagedImages
        from content.importing.parquet import read_parquet_records
        before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        try:
            list(read_parquet_records(Path({str(path)!r}), StagedImages(Path({str(tmp_path)!r}))))
        except ImportFailed as refused:
            print("refused:", refused)
        after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
        print(pyarrow.default_memory_pool().max_memory(), (after - before) * 1024)
        """
    )
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings"}
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120
    )
    assert done.returncode == 0, done.stderr
    refusal, numbers = done.stdout.strip().splitlines()[-2:]
    assert "a Parquet bomb?" in refusal
    arrow_peak, rss_growth = map(int, numbers.split())
    assert arrow_peak < 8_000_000, arrow_peak
    assert rss_growth < 40_000_000, rss_growth


def test_text_beyond_what_rows_can_hold_is_refused_before_reading(tmp_path, settings, media_root):
    settings.ARBITER_MAX_TEXT_CHARS = 1000  # a row may hold 32 × 1000 + 64 KiB bytes of text
    noise = "".join(random.Random(1).choices(string.ascii_letters, k=400_000))  # packs ~1.3:1
    path = write_hf(tmp_path / "t.parquet", [hf_row("p1", noise)], compression="zstd")
    message = import_error(path, file_format="parquet")
    assert "column 'prompt_text' of rows 1..1 holds" in message
    assert "ARBITER_MAX_TEXT_CHARS=1000" in message
    assert_nothing_written(media_root)


def test_dictionary_amplification_is_refused_while_reading(tmp_path, settings, media_root):
    """One 300 KB text repeated in 100 rows is stored once (dictionary encoding): the metadata
    says ~300 KB, each batch of 16 rows unpacks to 4.8 MB. Counted as the batches come."""
    settings.ARBITER_MAX_TEXT_CHARS = 1000
    noise = "".join(random.Random(2).choices(string.ascii_letters, k=300_000))
    rows = [hf_row(f"p{i}", noise) for i in range(100)]
    path = write_hf(tmp_path / "t.parquet", rows, use_dictionary=True)
    chunk = pq.ParquetFile(path).metadata.row_group(0).column(1)
    assert chunk.path_in_schema == "prompt_text" and chunk.total_uncompressed_size < 1_000_000
    message = import_error(path, file_format="parquet")
    assert message.endswith(
        "nothing written: column 'prompt_text' of rows 1..16 holds 4800064 bytes of text for "
        "16 row(s), above 97536 bytes a row (ARBITER_MAX_TEXT_CHARS=1000 characters)"
    )
    assert_nothing_written(media_root)


def test_the_unpacked_total_is_bounded(tmp_path, settings, media_root):
    settings.ARBITER_UPLOAD_MAX_UNPACKED_BYTES = 1000
    path = write_hf(tmp_path / "t.parquet", [hf_row(f"p{i}") for i in range(20)])
    assert "the Parquet file unpacks to more than 1000 bytes" in import_error(
        path, file_format="parquet"
    )
    assert_nothing_written(media_root)


# --------------------------------------------------------------------------- text limit


def test_long_text_in_native_jsonl_names_the_record(tmp_path, settings, media_root):
    settings.ARBITER_MAX_TEXT_CHARS = 50
    path = write_jsonl(tmp_path / "p.jsonl", [text_pair("ok"), text_pair("long", "z" * 51)])
    message = import_error(path)
    assert (
        "record 2: response_b.response_content[0][1] (id 'long') is 51 characters long, "
        "above the 50 characters limit (ARBITER_MAX_TEXT_CHARS)"
    ) in message
    assert_nothing_written(media_root)
    run_import(write_jsonl(tmp_path / "ok.jsonl", [text_pair("fine", "z" * 50)]))  # at the limit


def test_long_text_in_an_mmrb2_file(tmp_path, settings, media_root):
    settings.ARBITER_MAX_TEXT_CHARS = 50
    pairs = [text_pair("a"), text_pair("b"), text_pair("c")]
    pairs[2]["prompt_content"] = [["text", "p" * 80]]
    path = tmp_path / "pairs.json"
    path.write_text(json.dumps({"pairs": pairs}))
    message = import_error(path, file_format="mmrb2")
    assert "record 3: prompt_content[0][1] (id 'c') is 80 characters long" in message
    assert_nothing_written(media_root)


def test_long_caption_in_mjbench(tmp_path, settings, media_root, images):
    settings.ARBITER_MAX_TEXT_CHARS = 50
    path = write_jsonl(tmp_path / "mj.jsonl", [mjbench_row("m1", 0, caption="c" * 60)])
    message = import_error(path, file_format="mjbench", images=images)
    assert "record 1: caption (id 'm1') is 60 characters long" in message
    assert_nothing_written(media_root)


def test_long_rationale_and_metadata_of_an_export_row(tmp_path, settings, media_root, export_dir):
    settings.ARBITER_MAX_TEXT_CHARS = 50
    row = arbiter_row("r1", ratings=[rating("a1", 6, rationale="why " * 20), rating("a2", 7)])
    row["human_annotations"] = [6, 7]
    path = write_jsonl(export_dir / "rows.jsonl", [row])
    message = import_error(path, images=export_dir)
    assert "record 1: ratings[0].rationale (id 'r1') is 80 characters long" in message
    row = arbiter_row("r2", metadata={"note": "n" * 51})
    message = import_error(write_jsonl(export_dir / "rows.jsonl", [row]), images=export_dir)
    assert "record 1: metadata.note (id 'r2') is 51 characters long" in message
    assert_nothing_written(media_root)


def test_long_text_in_parquet_both_layouts(tmp_path, settings, media_root):
    settings.ARBITER_MAX_TEXT_CHARS = 50
    a_long = "t" * 70
    path = write_hf(tmp_path / "hf.parquet", [hf_row("h1"), hf_row("h2", a_long)])
    message = import_error(path, file_format="parquet")
    assert f"record 2: prompt_content[0][1] (id 'h2') is {len(a_long)} characters long" in message
    row = arbiter_row("e1")
    row["response_a"]["response_content"] = [["text", "u" * 90], ["image", "images/a.png"]]
    images = {"images/a.png": RED_PNG, "images/b.png": BLUE_PNG}
    path = write_parquet(
        tmp_path / "export.parquet", [arbiter_parquet_row(row, images)], ARBITER_SCHEMA
    )
    message = import_error(path, file_format="parquet")
    assert "record 1: response_a.response_content[0][1] (id 'e1') is 90 characters" in message
    assert_nothing_written(media_root)


# --------------------------------------------------------------------------- JSON depth


def test_depth_scanner_counts_only_brackets_outside_strings():
    assert json_too_deep("[" * MAX_JSON_DEPTH + "]" * MAX_JSON_DEPTH) is None
    assert "at line 1 column 65" in json_too_deep("[" * 65 + "]" * 65)
    assert json_too_deep(json.dumps(["[{" * 500, {"k]": '\\"[[['}])) is None
    nested = json.dumps({"a": ["\\"]})
    for _ in range(70):
        nested = json.dumps({'x\\"': [nested and json.loads(nested)]})
    assert "nested deeper than 64 levels" in json_too_deep(nested)
    assert "at line 3 column 66" in json_too_deep('{"a":\n"b",\n' + "  " + "[" * 70)


def test_deep_json_line_is_refused_with_its_line(tmp_path, media_root):
    path = tmp_path / "p.jsonl"
    path.write_text(json.dumps(text_pair("ok")) + "\n" + DEEP + "\n")
    message = import_error(path)
    assert "record 2: JSON nested deeper than 64 levels (at line 1 column 65)" in message
    assert_nothing_written(media_root)


def test_deep_mmrb2_file_is_refused(tmp_path, media_root):
    path = tmp_path / "pairs.json"
    path.write_text('{"pairs": [\n' + json.dumps(text_pair("ok")) + ",\n" + DEEP + "\n]}")
    message = import_error(path, file_format="mmrb2")
    assert "JSON nested deeper than 64 levels (at line 3 column 63)" in message
    assert_nothing_written(media_root)


def test_deep_json_column_in_parquet(tmp_path, media_root):
    path = write_hf(tmp_path / "t.parquet", [hf_row("p1"), hf_row("p2", prompt_metadata=DEEP)])
    message = import_error(path, file_format="parquet")
    assert "record 2: column 'prompt_metadata': JSON nested deeper than 64 levels" in message
    assert_nothing_written(media_root)


def test_deep_prediction_file_is_refused_by_the_command(tmp_path, images):
    run_import(write_jsonl(tmp_path / "p.jsonl", [text_pair("p1")]))
    path = tmp_path / "predictions.json"
    path.write_text('{"p1": {"forward": ' + DEEP + "}}")
    with pytest.raises(CommandError) as refused:
        call_command(
            "import_verdicts", str(path), project="proj", task="t2i", judge="j", stdout=None
        )
    assert str(refused.value) == (
        "import failed, nothing written: record 1: predictions.json: JSON nested deeper than "
        "64 levels (at line 1 column 82); refused before parsing"
    )
    assert not Verdict.objects.exists()
    assert Project.objects.count() == 1
