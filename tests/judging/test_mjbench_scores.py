"""MJ-Bench's scoring-model results as pointwise judges: matched to the pairs by
image names (or the row), with MJ-Bench's own accuracies, with and without ties, as its
personal/test.py computes them on the same files."""

import json

import pytest
from django.core.management import CommandError, call_command

from content.importing.errors import ImportFailed
from content.models import Pair
from imports.services.pair_import import pairs_import
from judging.models import JudgeRun, Verdict
from judging.services.score_import import scores_import
from metrics.report import project_report
from projects.models import Project
from tests.conftest import SHARED_MMRB2
from tests.importing.test_mjbench_shapes import _images_for

pytestmark = pytest.mark.django_db

MJBENCH = SHARED_MMRB2.parent / "mjbench"
MODELS = ("ImageReward", "aesthetics", "blipscore", "clipscore_v2", "hps_v2.1", "pickscore_v1")
SUBSETS = {  # result subset: (captions file, images folder)
    "human": ("quality/human/captions_human.json", "quality/human/examples_human"),
    "object_indoor": (
        "quality/objects_indoor/captions_objects.json",
        "quality/objects_indoor/examples_objects_indoor",
    ),
}


def mjbench_test_py(rows) -> tuple[float, float]:
    """MJ-Bench's personal/test.py restated: ("filter tie Accuracy", "re-introduce Pick filter
    tie Accuracy"), the first dropping predictions that are ties, the second counting them
    wrong (only human ties are dropped)."""

    def get_pred(pred):
        return 0 if pred == "0" else 1 if pred == "1" else 0.5

    humans = [get_pred(row["label"]) for row in rows]
    picks = [get_pred(row["pred"]) for row in rows]
    both = [(h, p) for h, p in zip(humans, picks, strict=True) if h != 0.5 and p != 0.5]
    without_ties = sum(h == p for h, p in both) / len(both)
    kept = [(h, p) for h, p in zip(humans, picks, strict=True) if h != 0.5]
    with_ties = sum(h == p for h, p in kept) / len(kept)
    return without_ties, with_ties


@pytest.mark.skipif(not MJBENCH.is_dir(), reason="MJ-Bench files not in ../shared")
@pytest.mark.parametrize("subset", sorted(SUBSETS))
def test_scoring_model_results_give_mjbenchs_own_accuracies(subset, _media_in_tmp):
    captions, images = SUBSETS[subset]
    pairs_import(
        MJBENCH / captions, project_slug="mj", task_slug=subset, file_format="mjbench",
        images_dir=MJBENCH / images,
    )  # fmt: skip
    for model in MODELS:
        call_command(
            "import_verdicts", str(MJBENCH / "personal/result" / model / f"{subset}0.0.json"),
            "--format", "mjbench-scores", "--project", "mj", "--task", subset, "--judge", model,
        )  # fmt: skip
    judges = project_report(Pair.objects.first().project)["tasks"][subset]["judges"]
    assert sorted(judges) == sorted(MODELS)  # named exactly as MJ-Bench's folders
    for model in MODELS:
        rows = json.loads((MJBENCH / "personal/result" / model / f"{subset}0.0.json").read_text())
        without_ties, with_ties = mjbench_test_py(rows)
        figures = judges[model]
        assert figures["scale"] == "imported"
        assert (figures["evaluated"], figures["missing"]) == (100, 0)
        assert figures["accuracy_without_ties_mjbench"] == pytest.approx(without_ties, abs=1e-4)
        assert figures["accuracy"] == pytest.approx(with_ties, abs=1e-4)
    # Each verdict holds the file's scores for the pair's responses.
    row = json.loads((MJBENCH / "personal/result/hps_v2.1" / f"{subset}0.0.json").read_text())[7]
    verdict = Verdict.objects.get(judge__name="hps_v2.1", pair__metadata__origin__row=7)
    assert (verdict.score_a, verdict.score_b) == (row["score_0"], row["score_1"])
    assert JudgeRun.objects.filter(pointwise_scale="imported").count() == len(MODELS)


@pytest.fixture
def three_pairs(tmp_path, _media_in_tmp):
    rows = [
        {"caption": f"photo {n}", "image_0": f"p{n}.png", "image_1": f"p{n}_edited.png",
         "label_0": 1}
        for n in range(3)
    ]  # fmt: skip
    folder = _images_for(rows, tmp_path / "images", keys=("image_0", "image_1"))
    path = tmp_path / "captions.json"
    path.write_text(json.dumps(rows))
    pairs_import(path, project_slug="s", task_slug="q", file_format="mjbench", images_dir=folder)
    return tmp_path


def _result(tmp_path, rows) -> str:
    path = tmp_path / "result.json"
    path.write_text(json.dumps(rows))
    return str(path)


def test_rows_match_by_image_names_swapped_or_by_row(three_pairs):
    rows = [
        {"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png",
         "score_0": 2.0, "score_1": 1.0, "label": "0", "pred": "0"},
        # The images the other way round: the scores follow them.
        {"id": 1, "image_0_path": "p1_edited.png", "image_1_path": "p1.png",
         "score_0": 3.0, "score_1": 1.0, "label": "0", "pred": "0"},
        # Renamed images (the blur subset's keys): matched by its id as the row.
        {"id": 2, "sharp_image": "x.jpg", "motion_blur_image": "y.jpg",
         "score_0": 5.0, "score_1": 5.0, "label": "0", "pred": "tie"},
    ]  # fmt: skip
    summary = scores_import(
        _result(three_pairs, rows), project_slug="s", task_slug="q", judge_name="clip"
    )
    assert summary["matched_by_row"] == 1
    assert summary["choices"] == {"A": 1, "B": 1, "tie": 1, "invalid": 0, "failed": 0}
    scores = {
        v.pair.metadata["origin"]["row"]: (v.score_a, v.score_b, v.choice)
        for v in Verdict.objects.select_related("pair")
    }
    assert scores == {0: (2.0, 1.0, "A"), 1: (1.0, 3.0, "B"), 2: (5.0, 5.0, "tie")}
    # Again: the same verdicts, replaced.
    scores_import(_result(three_pairs, rows), project_slug="s", task_slug="q", judge_name="clip")
    assert Verdict.objects.count() == 3


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"id": 9, "image_0_path": "zz.png", "image_1_path": "yy.png", "score_0": 1,
          "score_1": 2}, "no pair came from that row"),
        ({"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", "score_0": "1",
          "score_1": 2}, "score_0='1' must be a finite number"),
        ({"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", "score_0": 1,
          "score_1": None}, "score_1=None"),
        ({"id": 0, "caption": "no images", "score_0": 1, "score_1": 2}, "no image fields"),
    ],
)  # fmt: skip
def test_a_row_that_cannot_be_read_or_matched_refuses_the_file(three_pairs, row, message):
    good = {"id": 1, "image_0_path": "p1.png", "image_1_path": "p1_edited.png",
            "score_0": 1.0, "score_1": 0.0}  # fmt: skip
    with pytest.raises(ImportFailed, match=message):
        scores_import(_result(three_pairs, [good, row]), project_slug="s", task_slug="q",
                      judge_name="clip")  # fmt: skip
    assert not Verdict.objects.exists()


def test_two_rows_of_one_pair_refuse_the_file(three_pairs):
    row = {"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", "score_0": 1,
           "score_1": 0}  # fmt: skip
    with pytest.raises(ImportFailed, match=r"rows \[1, 2\] match the same pair"):
        scores_import(_result(three_pairs, [row, row]), project_slug="s", task_slug="q",
                      judge_name="clip")  # fmt: skip


def test_strict_mmrb2_is_for_mmrb2_files_only(three_pairs):
    with pytest.raises(CommandError, match="MMRB2 prediction files only"):
        call_command(
            "import_verdicts", _result(three_pairs, []), "--format", "mjbench-scores",
            "--strict-mmrb2", "--project", "s", "--task", "q", "--judge", "x",
        )  # fmt: skip


def test_hostile_numbers_and_twin_pairs_are_refused_or_ignored(three_pairs, tmp_path):
    huge = "1" + "0" * 400  # a JSON integer no float holds
    path = tmp_path / "huge.json"
    path.write_text(
        '[{"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", '
        f'"score_0": {huge}, "score_1": 1}}]'
    )
    with pytest.raises(ImportFailed, match="must be a finite number"):
        scores_import(path, project_slug="s", task_slug="q", judge_name="clip")
    path.write_text('[{"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", '
                    '"score_0": NaN, "score_1": 1}]')  # fmt: skip
    with pytest.raises(ImportFailed, match="must be a finite number"):
        scores_import(path, project_slug="s", task_slug="q", judge_name="clip")
    # Two pairs with the same image names: the name matches neither, the row decides.
    Pair.objects.filter(metadata__origin__row=1).update(
        metadata={"origin": {"format": "mjbench", "image_0": "p0.png",
                             "image_1": "p0_edited.png", "row": 1}}
    )  # fmt: skip
    row = {"id": 1, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", "score_0": 2,
           "score_1": 1}  # fmt: skip
    scores_import(_result(tmp_path, [row]), project_slug="s", task_slug="q", judge_name="clip")
    assert Verdict.objects.get().pair.metadata["origin"]["row"] == 1


def test_an_api_judges_verdicts_are_never_overwritten_by_a_file(three_pairs, fake_llm):
    from judging.services.judges import judge_save
    from tests.judging.conftest import fake_connection

    judge_save("gpt-4o", project=Project.objects.get(slug="s"), backend="openai", model="gpt-4o",
               connection=fake_connection(fake_llm, "fake-x"))  # fmt: skip
    row = {"id": 0, "image_0_path": "p0.png", "image_1_path": "p0_edited.png", "score_0": 2,
           "score_1": 1}  # fmt: skip
    with pytest.raises(ImportFailed, match="calls an API"):
        scores_import(_result(three_pairs, [row]), project_slug="s", task_slug="q",
                      judge_name="gpt-4o")  # fmt: skip
    with pytest.raises(ImportFailed, match="judge 'xxxx"):
        scores_import(_result(three_pairs, [row]), project_slug="s", task_slug="q",
                      judge_name="x" * 500)  # fmt: skip
