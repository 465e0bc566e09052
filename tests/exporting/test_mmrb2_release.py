"""Fidelity checks on MMRB2's real release files (4,000 pairs, placeholder images):
MMRB2's own `compute_accuracy.py`, run on `export_dataset --format mmrb2`, gives the figures
of `report --json`; MMRB2's own Parquet converter, run on Arbiter's Parquet export, gets back
every interleaved order of every response of the interleaved and reasoning sets."""

import io
import json
import subprocess
import sys

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from PIL import Image

from tests.conftest import SHARED_MMRB2
from tests.exporting.test_parquet_placeholders import _mmrb2_converter, _pixels

pytestmark = [pytest.mark.mmrb2, pytest.mark.django_db]

RELEASE = {  # task: (pairs file, sample predictions)
    "t2i": ("t2i_response_only.json", "sample_task1_image.json"),
    "edit": ("edit_response_only.json", "sample_task2_edit.json"),
    "interleaved": ("interleaved_response_only.json", "sample_task3_interleaved.json"),
    "reasoning": ("reasoning_response_only.json", "sample_task4_reasoning.json"),
}


@pytest.fixture
def release(mmrb2_images):
    for task, (pairs, predictions) in RELEASE.items():
        quiet = {"project": "m", "task": task, "stdout": io.StringIO()}
        call_command("import_pairs", str(SHARED_MMRB2 / pairs), file_format="mmrb2",
                     images=str(mmrb2_images), **quiet)  # fmt: skip
        call_command("import_verdicts", str(SHARED_MMRB2 / "outputs" / predictions),
                     judge="always-a", **quiet)  # fmt: skip
    out = io.StringIO()
    call_command("report", project="m", json=True, stdout=out)
    return json.loads(out.getvalue())


def test_mmrb2s_scorer_and_converter_read_the_release_exports_as_the_originals(
    release, mmrb2_images, tmp_path
):
    """One test for both checks: importing the release takes most of a minute."""
    scorer_on_the_release_export_equals_the_report(release, tmp_path)
    converter_gets_every_release_order_back_from_the_parquet(mmrb2_images, tmp_path)


def scorer_on_the_release_export_equals_the_report(release, tmp_path):
    call_command("export_dataset", project="m", out=str(tmp_path / "mmrb2"),
                 file_format="mmrb2", stdout=io.StringIO())  # fmt: skip
    scored = tmp_path / "scored.json"
    predictions = [str(SHARED_MMRB2 / "outputs" / p) for _, p in RELEASE.values()]
    subprocess.run(
        [sys.executable, str(SHARED_MMRB2 / "reference" / "compute_accuracy.py"),
         "--task", "all", "--predictions", *predictions,
         "--benchmark_dir", str(tmp_path / "mmrb2"), "--output", str(scored)],
        check=True, capture_output=True,
    )  # fmt: skip
    tasks = json.loads(scored.read_text())["tasks"]
    ours = [release["tasks"][task]["judges"]["always-a"]["accuracy"] for task in RELEASE]
    assert [task["accuracy"] for task in tasks] == pytest.approx(ours, abs=1e-9)
    assert [round(a, 3) for a in ours] == [0.532, 0.555, 0.575, 0.475]


def converter_gets_every_release_order_back_from_the_parquet(mmrb2_images, tmp_path):
    convert = _mmrb2_converter()
    call_command("export_dataset", project="m", out=str(tmp_path / "parquet"),
                 file_format="parquet", stdout=io.StringIO())  # fmt: skip
    for task in ("interleaved", "reasoning"):
        source = json.loads((SHARED_MMRB2 / RELEASE[task][0]).read_text())["pairs"]
        originals = {pair["id"]: pair for pair in source}
        rows = pq.read_table(tmp_path / "parquet" / f"{task}.parquet").to_pylist()
        assert len(rows) == len(originals) == 1000
        wrong = []
        for row in rows:
            for side in ("response_a", "response_b"):
                expected = [
                    [kind, _pixels((mmrb2_images / value).read_bytes()) if kind == "image"
                     else value.strip()]
                    for kind, value in originals[row["pair_id"]][side]["response_content"]
                    if kind == "image" or value.strip()
                ]  # fmt: skip
                images = [Image.open(io.BytesIO(i["bytes"])) for i in row[f"{side}_images"]]
                folder = tmp_path / "converted" / task / row["pair_id"] / side
                parts = convert(row[f"{side}_text"], images, "images", folder, row["pair_id"], side)
                got = [
                    [kind, _pixels((folder / value).read_bytes()) if kind == "image" else value]
                    for kind, value in parts
                ]
                if got != expected:
                    wrong.append((row["pair_id"], side))
        assert wrong == [], (task, len(wrong), wrong[:3])
