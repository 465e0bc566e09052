"""`export_dataset --format mmrb2`: MMRB2's own `compute_accuracy.py`, run as a
program on the export folder, scores a prediction file exactly as `report --json` does; pairs
without a side are left out and counted; the images the pairs show are in `images/`."""

import io
import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.core.management import call_command

from content.models import Pair
from tests.conftest import SHARED_MMRB2
from tests.factories import mmrb2_pair, write_image, write_mmrb2

pytestmark = [pytest.mark.mmrb2, pytest.mark.django_db]

SCORER = SHARED_MMRB2 / "reference" / "compute_accuracy.py"


def _json(command: str, *args, **options) -> dict:
    out = io.StringIO()
    call_command(command, *args, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


@pytest.fixture
def judged_project(tmp_path, _media_in_tmp):
    write_image(tmp_path / "a.png")
    write_image(tmp_path / "b.png", color=(10, 200, 10))
    pairs = [
        mmrb2_pair(f"p{n}", chosen="A" if n % 3 else "B", scores=(5, 6, 5) if n % 3 else (2, 1, 2))
        for n in range(9)
    ]
    pairs.append(mmrb2_pair("dropped", chosen="A", scores=(1, 6, 6)))  # span 5: dropped
    tie = mmrb2_pair("tie", chosen="tie", scores=())  # kept on its imported label, no side
    pairs.append(tie)
    call_command(
        "import_pairs", str(write_mmrb2(tmp_path / "t2i.json", pairs)), project="mm",
        task="t2i", file_format="mmrb2", images=str(tmp_path), stdout=io.StringIO(),
    )  # fmt: skip
    statuses = dict(Pair.objects.values_list("external_id", "status"))
    assert (statuses["dropped"], statuses["tie"]) == ("dropped", "kept")
    # A judge right on p1..p5, wrong on the rest, answering the tie and dropped pairs too.
    predictions = {
        pair["id"]: {
            "forward": [{"judgement": pair["chosen"] if n < 6 else "B"}],
            "reverse": [{"judgement": {"A": "B", "B": "A"}.get(pair["chosen"], "A")}],
        }
        for n, pair in enumerate(pairs)
    }
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(predictions))
    call_command("import_verdicts", str(path), project="mm", task="t2i", judge="j",
                 stdout=io.StringIO())  # fmt: skip
    return path


def test_mmrb2s_scorer_on_the_export_equals_the_report(judged_project, tmp_path):
    out = tmp_path / "export"
    summary = _json("export_dataset", project="mm", out=str(out), file_format="mmrb2")
    assert summary["tasks"]["t2i"]["pairs"] == 9
    assert summary["tasks"]["t2i"]["left_out"] == {"dropped": 1, "no_side": 1}
    benchmark = json.loads((out / "t2i.json").read_text())
    assert [pair["id"] for pair in benchmark["pairs"]] == [f"p{n}" for n in range(9)]
    first = benchmark["pairs"][0]
    assert set(first) == {"id", "prompt_source", "prompt_metadata", "response_a", "response_b",
                          "chosen", "human_annotations"}  # fmt: skip
    assert first["human_annotations"] == [2, 1, 2] and first["chosen"] == "B"
    for part in first["response_a"]["response_content"]:
        if part[0] == "image":
            assert (out / part[1]).is_file()
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["counts"]["left_out"] == {"dropped": 1, "no_side": 1}
    assert manifest["tasks"][0]["file"] == "t2i.json"

    result = tmp_path / "scored.json"
    subprocess.run(
        [sys.executable, str(SCORER), "--task", "image", "--predictions", str(judged_project),
         "--benchmark_dir", str(out), "--output", str(result)],
        check=True, capture_output=True,
    )  # fmt: skip
    scored = json.loads(result.read_text())
    assert (scored["total_pairs"], scored["missing_pairs"]) == (9, 0)
    report = _json("report", project="mm")["tasks"]["t2i"]["judges"]["j"]
    assert report["evaluated"] == 18
    assert report["accuracy"] == pytest.approx(scored["accuracy"], abs=1e-6)
    assert 0 < scored["accuracy"] < 1


def test_the_export_imports_back_as_mmrb2(judged_project, tmp_path):
    out = tmp_path / "export"
    _json("export_dataset", project="mm", out=str(out), file_format="mmrb2")
    summary = _json("import_pairs", str(Path(out) / "t2i.json"), project="back", task="t2i",
                    file_format="mmrb2", images=str(out))  # fmt: skip
    assert summary["pairs"] == 9 and summary["ratings"] == 27
    assert set(Pair.objects.filter(project__slug="back").values_list("label", flat=True)) == {
        "A", "B"
    }  # fmt: skip


def test_a_task_named_manifest_is_refused_not_overwritten(judged_project, tmp_path):
    from django.core.management import CommandError

    from projects.models import Task

    Task.objects.filter(slug="t2i").update(slug="manifest")
    with pytest.raises(CommandError, match="a task named 'manifest'"):
        _json("export_dataset", project="mm", out=str(tmp_path / "x"), file_format="mmrb2")
    assert not (tmp_path / "x").exists()
