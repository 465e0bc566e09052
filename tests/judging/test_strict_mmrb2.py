"""`import_verdicts --strict-mmrb2`: a prediction file with every quirk Arbiter's
default reading is kind to (more samples, lowercase and spaced letters, "0", a non-string 0,
tie words, ids the benchmark does not have) gives exactly the accuracy MMRB2's own
`compute_accuracy.py` computes; the default reading differs, as docs/commands.md says it does."""

import importlib.util
import io
import json

import pytest
from django.core.management import call_command

from tests.conftest import SHARED_MMRB2
from tests.factories import mmrb2_pair, write_image, write_mmrb2

pytestmark = [pytest.mark.mmrb2, pytest.mark.django_db]


def _mmrb2_scorer():
    spec = importlib.util.spec_from_file_location(
        "mmrb2_compute_accuracy", SHARED_MMRB2 / "reference" / "compute_accuracy.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.compute_task_accuracy


# (chosen, forward judgements, reverse judgements); reverse letters are in shown order.
PREDICTIONS = {
    "p1": ("A", ["A", "B", "B"], ["B"]),  # more samples: the scorer reads the first only
    "p2": ("A", ["a"], [" B"]),  # lowercase, a space: wrong for the scorer
    "p3": ("B", ["0"], [0]),  # a string "0" is an answer (wrong), a number 0 none at all
    "p4": ("B", ["tie"], ["A"]),
    "p5": ("A", [""], []),  # empty: not counted
    "p6": ("B", ["B"], ["A", "A"]),
    "p7": ("A", [["A"]], [{"side": "B"}]),  # not text at all: wrong answers, no crash
}


def _report_accuracy(judge: str) -> float:
    out = io.StringIO()
    call_command("report", project="strict", json=True, stdout=out)
    return json.loads(out.getvalue())["tasks"]["t2i"]["judges"][judge]["accuracy"]


def test_strict_reading_reproduces_mmrb2s_scorer_exactly(tmp_path, _media_in_tmp):
    pairs = [
        mmrb2_pair(pair_id, chosen=chosen, scores=(5, 6, 5) if chosen == "A" else (2, 1, 2))
        for pair_id, (chosen, _, _) in PREDICTIONS.items()
    ]
    write_image(tmp_path / "a.png")
    write_image(tmp_path / "b.png", color=(10, 200, 10))
    call_command(
        "import_pairs", str(write_mmrb2(tmp_path / "t2i.json", pairs)), project="strict",
        task="t2i", file_format="mmrb2", images=str(tmp_path), stdout=io.StringIO(),
    )  # fmt: skip
    predictions = {
        pair_id: {
            "forward": [{"judgement": j} for j in forward],
            "reverse": [{"judgement": j} for j in reverse],
        }
        for pair_id, (_, forward, reverse) in PREDICTIONS.items()
    }
    predictions["not-in-the-benchmark"] = {"forward": [{"judgement": "A"}]}
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(predictions))

    out = io.StringIO()
    call_command(
        "import_verdicts", str(path), "--strict-mmrb2", project="strict", task="t2i",
        judge="strict", json=True, stdout=out,
    )  # fmt: skip
    summary = json.loads(out.getvalue())
    assert summary["skipped_unknown_ids"] == 1 and summary["pairs"] == 7

    reference = _mmrb2_scorer()(predictions, {"pairs": pairs}, "t2i")
    assert _report_accuracy("strict") == pytest.approx(reference.accuracy, abs=1e-4)
    assert reference.total_evaluated == 11  # p3's number 0 and p5's "" are not counted

    # The default reading refuses the unknown id, and is kinder to the rest.
    del predictions["not-in-the-benchmark"]
    path.write_text(json.dumps(predictions))
    call_command(
        "import_verdicts", str(path), project="strict", task="t2i", judge="default",
        stdout=io.StringIO(),
    )  # fmt: skip
    assert _report_accuracy("default") != pytest.approx(reference.accuracy, abs=1e-4)
