"""The real MMRB2 release files, end to end: import, external verdicts, report.

The always-"A" judge must score what MMRB2's own accuracy script reports for these files.
Skips when ../shared/datasets/mmrb2 is absent (see conftest).
"""

import io
import json

import pytest
from django.core.management import call_command

from annotation.models import Rating
from content.models import Asset, Pair, Prompt
from tests.conftest import SHARED_MMRB2

TASKS = {
    # task slug: (pair file, prediction file, accuracy of always-A)
    "t2i": ("t2i_response_only.json", "sample_task1_image.json", 0.532),
    "edit": ("edit_response_only.json", "sample_task2_edit.json", 0.555),
    "interleaved": ("interleaved_response_only.json", "sample_task3_interleaved.json", 0.575),
    "reasoning": ("reasoning_response_only.json", "sample_task4_reasoning.json", 0.475),
}


def _command_json(name: str, *args, **options) -> dict:
    out = io.StringIO()
    call_command(name, *args, json=True, stdout=out, **options)
    return json.loads(out.getvalue())


@pytest.mark.mmrb2
@pytest.mark.django_db
def test_mmrb2_release_files_reproduce_always_a_accuracy(mmrb2_images):
    summaries = {}
    for task, (pair_file, _, _) in TASKS.items():
        summaries[task] = _command_json(
            "import_pairs",
            str(SHARED_MMRB2 / pair_file),
            project="mmrb2",
            task=task,
            file_format="mmrb2",
            images=str(mmrb2_images),
        )
    for task, (_, prediction_file, _) in TASKS.items():
        verdicts = _command_json(
            "import_verdicts",
            str(SHARED_MMRB2 / "outputs" / prediction_file),
            project="mmrb2",
            task=task,
            judge="always-a",
        )
        assert verdicts["verdicts"] == 2000, task

    assert {task: s["pairs"] for task, s in summaries.items()} == dict.fromkeys(TASKS, 1000)
    assert sum(s["ratings"] for s in summaries.values()) == 9000
    assert summaries["reasoning"]["ratings"] == 0
    assert sum(s["images"]["new"] for s in summaries.values()) == 14017
    assert Asset.objects.count() == 14017
    assert Rating.objects.count() == 9000
    assert Pair.objects.count() == 4000
    assert not Prompt.objects.filter(content__isnull=False).exists()

    report = _command_json("report", project="mmrb2")

    assert report["project"] == "mmrb2"
    assert report["scale_points"] == 6
    for task, (_, _, accuracy) in TASKS.items():
        stats = report["tasks"][task]
        assert stats["pairs"] == 1000, task
        assert stats["kept"] == 1000, task
        assert stats["dropped"] == 0, task
        assert stats["pending"] == 0, task
        judge = stats["judges"]["always-a"]
        assert judge["accuracy"] == pytest.approx(accuracy), task
        assert judge["evaluated"] == 2000, task
        assert judge["missing"] == 0, task
        # The file says "A" forward and "B" reverse: canonically A both times, consistent.
        assert judge["position_consistency"] == 1.0, task
    for task in ("t2i", "edit", "interleaved"):
        agreement = report["tasks"][task]["agreement"]
        assert agreement["ratings"] == 3000, task
        assert agreement["alpha_ordinal"] is not None, task
    reasoning = report["tasks"]["reasoning"]["agreement"]
    assert reasoning["ratings"] == 0
    assert reasoning["alpha_ordinal"] is None
    assert reasoning["alpha_interval"] is None
    average = sum(accuracy for _, _, accuracy in TASKS.values()) / 4
    assert report["judges"]["always-a"]["average"] == pytest.approx(average)
