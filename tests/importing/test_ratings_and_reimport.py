"""`import_pairs`: scales, imported ratings and grades, labels and statuses, re-import."""

import json

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Assignment, Rating
from content.importing.errors import ImportFailed
from content.models import Asset, Generator, Pair, Prompt, Response
from imports.services.pair_import import pairs_import
from projects.models import Project, Task
from tests.factories import mmrb2_pair, write_jsonl, write_mmrb2
from tests.importing.helpers import (
    assert_nothing_written,
    import_error,
    media_files,
    mjbench_row,
    run_import,
    table_counts,
)

pytestmark = pytest.mark.django_db


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
    # Stored once (assets are global), but "reused" would tell the lead of `two` that the
    # images exist in another project: they count as new there.
    assert summary["images"] == {"new": 2, "reused": 0}
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
