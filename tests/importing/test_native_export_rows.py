"""`import_pairs --format native` of Arbiter's own export rows: ratings with annotator ids,
aspects, active time and rationale; reference label; adjudication; metadata; re-import."""

import pytest
from django.contrib.auth import get_user_model

from annotation.models import Adjudication, AspectScore, Rating
from annotation.services.consensus import pairs_decide
from content.models import Pair
from projects.models import Project
from tests.factories import mmrb2_pair, write_jsonl
from tests.importing.helpers import (
    arbiter_row,
    assert_nothing_written,
    import_error,
    rating,
    run_import,
    table_counts,
)

pytestmark = pytest.mark.django_db


def _import(tmp_path, export_dir, rows, **kwargs):
    return run_import(write_jsonl(tmp_path / "t2i.jsonl", rows), images=export_dir, **kwargs)


def test_ratings_are_imported_with_aspects_time_rationale_and_annotator_ids(tmp_path, export_dir):
    summary = _import(tmp_path, export_dir, [arbiter_row("p1")])

    assert summary["ratings"] == 3
    project = Project.objects.get(slug="proj")
    assert project.scale_points == 7
    pair = Pair.objects.get()
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "A", "consensus")
    assert pair.consensus_mean == pytest.approx(19 / 3)
    assert pair.metadata == {"category": "colour"}
    assert pair.reference_label == ""  # the row's reference label, not its chosen "A"
    ratings = {
        r.annotator.username: r for r in Rating.objects.select_related("annotator", "assignment")
    }
    assert set(ratings) == {
        "imported-proj-r-0123456789ab",
        "imported-proj-r-ba9876543210",
        "imported-proj-2",
    }
    first = ratings["imported-proj-r-0123456789ab"]
    assert (first.overall, first.scale, first.active_seconds) == (6, 7, 12.5)
    assert first.rationale == "A is right"
    assert first.imported
    assert first.assignment.status == "submitted"
    assert ratings["imported-proj-2"].rationale == 'ünïcode \u2028 "quoted"'
    assert ratings["imported-proj-r-ba9876543210"].active_seconds == 3.0
    aspects = {
        (a.rating.annotator.username, a.aspect): (a.score, a.scale)
        for a in AspectScore.objects.select_related("rating__annotator")
    }
    assert aspects == {
        ("imported-proj-r-0123456789ab", "faithfulness"): (5, 7),
        ("imported-proj-r-ba9876543210", "faithfulness"): (7, 7),
        ("imported-proj-r-ba9876543210", "quality"): (6, 7),
    }
    for user in get_user_model().objects.filter(username__startswith="imported-"):
        assert not user.is_active
        assert not user.has_usable_password()


def test_annotator_ids_are_one_placeholder_across_rows_and_score_positions(tmp_path, export_dir):
    plain = mmrb2_pair("plain", scores=(5, 5, 6), image_a="images/a.png", image_b="images/b.png")
    plain["scale"] = 7
    rows = [
        arbiter_row("p1", ratings=[rating("1", 6), rating("x.y_z-9", 7), rating("3", 6)]),
        arbiter_row("p2", ratings=[rating("x.y_z-9", 2), rating("1", 1), rating("3", 2)]),
        plain,  # no ratings: position i belongs to placeholder i + 1
    ]
    _import(tmp_path, export_dir, rows)

    users = get_user_model().objects.filter(ratings__isnull=False).distinct()
    assert sorted(u.username for u in users) == [
        "imported-proj-1",
        "imported-proj-2",
        "imported-proj-3",
        "imported-proj-x.y_z-9",
    ]
    one = get_user_model().objects.get(username="imported-proj-1")
    assert sorted(one.ratings.values_list("pair__external_id", "overall")) == [
        ("p1", 6),
        ("p2", 1),
        ("plain", 5),
    ]
    assert Pair.objects.get(external_id="p2").label == "B"


@pytest.mark.parametrize(
    ("decision", "label", "status"),
    [("keep_a", "A", "kept"), ("keep_b", "B", "kept"), ("drop", "", "dropped")],
)
def test_adjudication_is_recreated_under_placeholder_lead(
    tmp_path, export_dir, decision, label, status
):
    # The consensus alone would drop this pair (span 6 > 4).
    ratings = [rating("a", 1), rating("b", 7), rating("c", 7)]
    adjudication = {"decision": decision, "note": "the lead looked closely"}
    row = arbiter_row("p1", ratings=ratings, adjudication=adjudication, decided_by="adjudication")

    summary = _import(tmp_path, export_dir, [row])

    assert summary["adjudications"] == 1
    pair = Pair.objects.get()
    assert (pair.label, pair.status, pair.decided_by) == (label, status, "adjudication")
    assert pair.rating_count == 3
    recorded = Adjudication.objects.select_related("lead").get()
    assert (recorded.pair, recorded.decision) == (pair, decision)
    assert recorded.note == "the lead looked closely"
    assert recorded.lead.username == "imported-lead-proj"
    assert not recorded.lead.is_active
    assert not recorded.lead.has_usable_password()
    # The consensus service, reading the stored rows, comes to the same decision.
    assert pairs_decide([pair], Project.objects.get()) == []


def test_adjudication_without_ratings_and_one_lead_for_all(tmp_path, export_dir):
    rows = [
        arbiter_row("p1", ratings=[], chosen="B", adjudication={"decision": "keep_b", "note": ""}),
        arbiter_row("p2", ratings=[], chosen="", adjudication={"decision": "drop", "note": "x"}),
    ]
    _import(tmp_path, export_dir, rows)
    p1, p2 = Pair.objects.order_by("external_id")
    assert (p1.label, p1.status, p1.decided_by, p1.rating_count) == ("B", "kept", "adjudication", 0)
    assert (p2.label, p2.status) == ("", "dropped")
    assert Adjudication.objects.values("lead").distinct().count() == 1


def test_dropped_status_without_adjudication_is_decided_by_the_consensus(tmp_path, export_dir):
    rows = [
        # Mean 4 = the centre of 1..7: ambiguous, dropped.
        arbiter_row("ambiguous", ratings=[rating("a", 4), rating("b", 4), rating("c", 4)]),
        # The row says dropped, but its ratings keep it here: the consensus rule decides.
        arbiter_row("clear", ratings=[rating("a", 1), rating("b", 2), rating("c", 1)]),
    ]
    for row in rows:
        row["status"], row["chosen"] = "dropped", ""
    summary = _import(tmp_path, export_dir, rows)
    assert summary["statuses"] == {"dropped": 1, "kept": 1}
    ambiguous = Pair.objects.get(external_id="ambiguous")
    assert (ambiguous.status, ambiguous.label, ambiguous.decided_by) == ("dropped", "", "consensus")
    clear = Pair.objects.get(external_id="clear")
    assert (clear.status, clear.label) == ("kept", "B")


@pytest.mark.parametrize(
    ("reference", "chosen", "status", "label"),
    [("B", "B", "kept", "B"), ("tie", "", "kept", ""), ("", "", "candidate", "")],
)
def test_reference_label_comes_from_the_row(tmp_path, export_dir, reference, chosen, status, label):
    row = arbiter_row("p1", ratings=[], reference_label=reference, chosen=chosen)
    row["decided_by"] = "imported"
    _import(tmp_path, export_dir, [row])
    pair = Pair.objects.get()
    assert (pair.reference_label, pair.status, pair.label) == (reference, status, label)


def test_grades_of_responses_are_kept(tmp_path, export_dir):
    row = arbiter_row("g1", ratings=[], scale=6)
    row["human_annotations"] = {"response_a_ratings": ["A", "B"], "response_b_ratings": ["C"]}
    row["response_a"]["grades"] = ["A", "B"]
    row["response_b"]["grades"] = ["C"]
    summary = _import(tmp_path, export_dir, [row])
    assert summary["graded_responses"] == 2
    pair = Pair.objects.select_related("response_a", "response_b").get()
    assert pair.response_a.imported_grades == ["A", "B"]
    assert pair.response_b.imported_grades == ["C"]


def test_unknown_extra_fields_are_accepted(tmp_path, export_dir):
    row = arbiter_row("p1", some_future_field={"nested": [1, 2]}, decided_by=None, mean="n/a")
    assert _import(tmp_path, export_dir, [row])["pairs"] == 1


# --------------------------------------------------------------------------- refusals


def _refused(tmp_path, export_dir, bad_row) -> str:
    rows = [arbiter_row("ok"), bad_row]
    return import_error(write_jsonl(tmp_path / "t2i.jsonl", rows), images=export_dir)


@pytest.mark.parametrize(
    "annotations",
    [[7, 6, 6], [6, 7], [6, 7, 6, 6], {"response_a_ratings": ["A"]}, None, "missing"],
    ids=["order", "fewer", "more", "grades", "null", "missing"],
)
def test_ratings_that_differ_from_human_annotations_are_refused(
    tmp_path, export_dir, media_root, annotations
):
    row = arbiter_row("bad")  # ratings 6, 7, 6
    if annotations == "missing":
        del row["human_annotations"]
    else:
        row["human_annotations"] = annotations

    message = _refused(tmp_path, export_dir, row)

    assert "record 2" in message
    assert "differ from human_annotations" in message
    assert_nothing_written(media_root)


@pytest.mark.parametrize("annotator", ["", "a b", "../x", "x/y", "x" * 65, "é", 7, None])
def test_bad_annotator_id_is_refused(tmp_path, export_dir, media_root, annotator):
    row = arbiter_row("bad", ratings=[rating("a", 6), rating(annotator, 6), rating("c", 6)])
    message = _refused(tmp_path, export_dir, row)
    assert "record 2" in message
    assert "ratings[1].annotator" in message
    assert_nothing_written(media_root)


def test_longest_annotator_id_is_accepted(tmp_path, export_dir):
    longest = "A-z_0." + "9" * 58
    _import(tmp_path, export_dir, [arbiter_row("p", ratings=[rating(longest, 5)])])
    assert Rating.objects.get().annotator.username == f"imported-proj-{longest}"


def test_annotator_twice_in_a_row_is_refused(tmp_path, export_dir, media_root):
    row = arbiter_row("bad", ratings=[rating("a", 6), rating("a", 6)])
    message = _refused(tmp_path, export_dir, row)
    assert "record 2" in message
    assert "'a' rates this pair twice" in message
    assert_nothing_written(media_root)


def _bad(field, value) -> dict:
    row = arbiter_row("bad")
    if field.startswith("ratings[0]."):
        row["ratings"][0][field.removeprefix("ratings[0].")] = value
    elif field.startswith("response_a."):
        row["response_a"][field.removeprefix("response_a.")] = value
    else:
        row[field] = value
    return row


BAD_FIELDS = [
    ("ratings[0].overall", 8, "ratings[0].overall=8 is outside the scale 1..7"),
    ("ratings[0].overall", "6", "ratings[0].overall='6' is not an integer"),
    ("ratings[0].aspects", {"quality": 0}, "ratings[0].aspects.quality=0 is outside"),
    ("ratings[0].aspects", {"quality": 2.5}, "ratings[0].aspects.quality=2.5 is not an integer"),
    ("ratings[0].aspects", ["quality"], "ratings[0].aspects must be an object"),
    ("ratings[0].aspects", {"": 3}, "key '' must be 1 to 64 characters"),
    ("ratings[0].active_seconds", -1, "active_seconds=-1 must be a number >= 0"),
    ("ratings[0].active_seconds", "3", "active_seconds='3' must be a number"),
    ("ratings[0].active_seconds", True, "active_seconds=True must be a number"),
    ("ratings[0].rationale", 5, "ratings[0].rationale must be a string"),
    ("ratings", "all good", "ratings must be a list"),
    ("ratings", [6, 7, 6], "ratings[0] must be an object"),
    ("adjudication", "drop", "adjudication must be an object"),
    ("adjudication", {"decision": "keep"}, "adjudication.decision='keep' must be one of"),
    ("adjudication", {"decision": "drop", "note": 3}, "adjudication.note must be a string"),
    ("reference_label", "C", "reference_label='C'"),
    ("metadata", ["x"], "metadata must be an object"),
    ("response_a.grades", "A", "response_a.grades must be a list"),
]


@pytest.mark.parametrize(("field", "value", "expected"), BAD_FIELDS)
def test_bad_export_field_is_refused(tmp_path, export_dir, media_root, field, value, expected):
    message = _refused(tmp_path, export_dir, _bad(field, value))
    assert "record 2" in message
    assert expected in message
    assert_nothing_written(media_root)


def test_grades_disagreeing_with_human_annotations_are_refused(tmp_path, export_dir):
    row = arbiter_row("bad", ratings=[], scale=6)
    row["human_annotations"] = {"response_a_ratings": ["A"], "response_b_ratings": []}
    row["response_a"]["grades"] = ["B"]
    message = _refused(tmp_path, export_dir, row)
    assert "record 2" in message
    assert "response_a.grades ['B'] disagree" in message


# --------------------------------------------------------------------------- re-import


def test_reimporting_the_same_export_file_changes_nothing(tmp_path, export_dir):
    adjudicated = arbiter_row("p2", adjudication={"decision": "keep_b", "note": "why"})
    path = write_jsonl(tmp_path / "t2i.jsonl", [arbiter_row("p1"), adjudicated])
    run_import(path, images=export_dir)
    counts = table_counts()
    adjudications = Adjudication.objects.count()
    users = get_user_model().objects.count()

    summary = run_import(path, images=export_dir)

    assert (summary["pairs"], summary["unchanged"], summary["ratings"]) == (0, 2, 0)
    assert summary["adjudications"] == 0
    assert table_counts() == counts
    assert Adjudication.objects.count() == adjudications == 1
    assert get_user_model().objects.count() == users


@pytest.mark.parametrize(
    ("change", "counts_as_new_content"),
    [
        ("rationale", True),
        ("aspects", True),
        ("active_seconds", True),
        ("annotator", True),
        ("adjudication", True),
        ("reference_label", True),
        ("metadata", True),
        # Derived or foreign fields: decided again on import, so not part of the pair.
        ("mean", False),
        ("status", False),
        ("decided_by", False),
        ("verdicts", False),
        ("task", False),
    ],
)
def test_reimport_of_a_changed_export_row(tmp_path, export_dir, change, counts_as_new_content):
    run_import(write_jsonl(tmp_path / "a.jsonl", [arbiter_row("p1")]), images=export_dir)
    counts = table_counts()
    row = arbiter_row("p1")
    changes = {
        "rationale": lambda: row["ratings"][0].update(rationale="changed my mind"),
        "aspects": lambda: row["ratings"][0].update(aspects={"faithfulness": 4}),
        "active_seconds": lambda: row["ratings"][0].update(active_seconds=99),
        "annotator": lambda: row["ratings"][0].update(annotator="someone-else"),
        "adjudication": lambda: row.update(adjudication={"decision": "drop", "note": ""}),
        "reference_label": lambda: row.update(reference_label="A"),
        "metadata": lambda: row.update(metadata={"category": "other"}),
        "mean": lambda: row.update(mean=1.0),
        "status": lambda: row.update(status="dropped"),
        "decided_by": lambda: row.update(decided_by="adjudication"),
        "verdicts": lambda: row.update(verdicts=None),
        "task": lambda: row.update(task="edit"),
    }
    changes[change]()
    path = write_jsonl(tmp_path / "b.jsonl", [row])

    if counts_as_new_content:
        message = import_error(path, images=export_dir)
        assert "record 1" in message
        assert "different content" in message
    else:
        assert run_import(path, images=export_dir)["unchanged"] == 1
    assert table_counts() == counts
