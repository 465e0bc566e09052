"""What a JSONL row says: labels, canonical scores, ratings, anonymous ids, adjudication,
verdicts, and which pairs are exported."""

import hashlib
import hmac

import pytest
from django.conf import settings

from tests.exporting.conftest import ADJUDICATION_NOTE, ANNOTATORS, PLAN
from tests.exporting.helpers import by_id, jsonl_rows, run_export

pytestmark = pytest.mark.django_db

MMRB2_FIELDS = [
    "id",
    "prompt_source",
    "prompt_metadata",
    "prompt_content",
    "response_a",
    "response_b",
    "chosen",
    "human_annotations",
]


def _anonymous(project, user) -> str:
    message = f"annotator:{project.pk}:{user.pk}".encode()
    return "r-" + hmac.new(settings.SECRET_KEY.encode(), message, hashlib.sha256).hexdigest()[:12]


def test_rows_carry_label_scores_ratings_and_decision(rated, tmp_path):
    run_export(rated.project, tmp_path / "out")
    rows = jsonl_rows(tmp_path / "out", "t2i")
    pairs = rated.pairs
    # Kept pairs only, by pair id; the ambiguous pair 2 was dropped.
    assert [row["id"] for row in rows] == [pairs[i].external_id for i in (0, 1, 3)]
    first, second, adjudicated = rows
    assert list(first)[: len(MMRB2_FIELDS)] == MMRB2_FIELDS
    assert first["chosen"] == "A" and second["chosen"] == "B" and adjudicated["chosen"] == "B"
    assert first["prompt_content"] == [["text", "Draw scene number 0, *please*"]]
    assert first["response_a"]["model_name"] == "secretmodelA"
    assert first["response_a"]["response_content"][0] == ["text", "A says 0"]
    assert "grades" not in first["response_a"]
    assert (first["scale"], first["task"], first["status"]) == (7, "t2i", "kept")
    assert first["reference_label"] == "" and first["metadata"] == {}
    assert "verdicts" not in first

    ids = {_anonymous(rated.project, user): i for i, user in enumerate(rated.annotators)}
    for row, plan in ((first, PLAN[0]), (second, PLAN[1]), (adjudicated, PLAN[3])):
        annotators = [rating["annotator"] for rating in row["ratings"]]
        assert annotators == sorted(ids)  # ordered by anonymous id
        expected = [plan[ids[anonymous]] for anonymous in annotators]
        assert row["human_annotations"] == [r["overall"] for r in row["ratings"]] == expected
        assert row["mean"] == pytest.approx(sum(expected) / 3)
        assert row["span"] == max(expected) - min(expected)
        for rating in row["ratings"]:
            position = ids[rating["annotator"]]
            overall = plan[position]
            assert rating["aspects"] == {"faithfulness": max(1, overall - 1), "quality": overall}
            assert rating["active_seconds"] == 10 + position
            assert rating["rationale"].startswith(f"reason {position} on pair ")
            assert rating["imported"] is False

    assert first["decided_by"] == second["decided_by"] == "consensus"
    assert first["adjudication"] is None
    assert adjudicated["decided_by"] == "adjudication"
    assert adjudicated["adjudication"] == {"decision": "keep_b", "note": ADJUDICATION_NOTE}


def test_anonymous_ids_are_stable_and_reveal_no_username(rated, tmp_path):
    run_export(rated.project, tmp_path / "one")
    run_export(rated.project, tmp_path / "two")
    one = (tmp_path / "one" / "t2i.jsonl").read_text()
    assert one == (tmp_path / "two" / "t2i.jsonl").read_text()
    for name in (*ANNOTATORS, "boss"):
        assert name not in one
    annotators = {
        r["annotator"] for row in jsonl_rows(tmp_path / "one", "t2i") for r in row["ratings"]
    }
    assert annotators == {_anonymous(rated.project, user) for user in rated.annotators}


def test_dropped_pairs_only_with_the_flag(rated, tmp_path):
    run_export(rated.project, tmp_path / "all", include_dropped=True)
    rows = by_id(jsonl_rows(tmp_path / "all", "t2i"))
    assert list(rows) == [pair.external_id for pair in rated.pairs]
    dropped = rows[rated.pairs[2].external_id]
    assert (dropped["status"], dropped["chosen"], dropped["decided_by"]) == (
        "dropped",
        "",
        "consensus",
    )
    assert sorted(dropped["human_annotations"]) == [3, 4, 5] and dropped["mean"] == 4


def test_verdicts_only_with_the_flag(rated, tmp_path):
    run_export(rated.project, tmp_path / "out", with_verdicts=True)
    first, second, third = jsonl_rows(tmp_path / "out", "t2i")
    assert [(v["judge"], v["order"], v["sample"], v["choice"]) for v in first["verdicts"]] == [
        ("alpha", "forward", 0, "A"),
        ("alpha", "reverse", 0, "A"),
        ("zeta", "forward", 0, "tie"),
        ("zeta", "forward", 1, "B"),
        ("zeta", "reverse", 0, "tie"),
        ("zeta", "reverse", 1, "B"),
    ]
    assert second["verdicts"] == [
        {"judge": "alpha", "order": "forward", "sample": 0, "choice": None, "error": "HTTP 500"}
    ]
    assert third["verdicts"] == []


def test_task_filter(rated, tmp_path):
    summary = run_export(rated.project, tmp_path / "out", task="edit")
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == [
        "edit.jsonl",
        "images",
        "manifest.json",
    ]
    assert summary["tasks"] == {"edit": {"pairs": 2, "ratings": 0}}
    rows = jsonl_rows(tmp_path / "out", "edit")
    assert [(r["id"], r["chosen"], r["decided_by"]) for r in rows] == [
        ("edit-1", "A", "imported"),
        ("edit-2", "B", "imported"),
    ]
    assert rows[0]["reference_label"] == "A" and rows[0]["human_annotations"] == []
    assert rows[0]["mean"] is None and rows[0]["span"] is None


def test_imported_ratings_keep_their_ids_and_grades_their_shape(imported, tmp_path):
    run_export(imported, tmp_path / "out")
    rows = by_id(jsonl_rows(tmp_path / "out", "mix"))
    assert rows["imp-1"]["human_annotations"] == [5, 6, 5]
    assert rows["imp-2"]["human_annotations"] == [1, 2, 2]
    assert [r["annotator"] for r in rows["imp-1"]["ratings"]] == ["1", "2", "3"]
    assert all(r["imported"] for r in rows["imp-1"]["ratings"])
    assert rows["imp-1"]["scale"] == 6 and rows["imp-1"]["chosen"] == "A"
    reasoning = rows["imp-3"]
    assert reasoning["human_annotations"] == {
        "response_a_ratings": ["A", "B"],
        "response_b_ratings": ["C", "C"],
    }
    assert reasoning["response_a"]["grades"] == ["A", "B"]
    assert reasoning["response_b"]["grades"] == ["C", "C"]
    assert reasoning["ratings"] == [] and reasoning["decided_by"] == "imported"
    assert reasoning["prompt_content"] is None  # MMRB2 response-only file: no prompt shipped
