"""Gold checks from an import column: a record's `gold` field makes its pair a gold
check with that expected side, inside the import's transaction; a wrong one refuses the whole
file and writes nothing."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.management import CommandError, call_command

from annotation.models import GoldAnswer
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from tests.factories import image_bytes, member, mmrb2_pair, write_image, write_jsonl

pytestmark = pytest.mark.django_db


def _import(path, images=None, **options) -> dict:
    out = io.StringIO()
    extra = {"images": str(images)} if images else {}
    call_command("import_pairs", str(path), project="g", task="t2i", json=True, stdout=out,
                 **extra, **options)  # fmt: skip
    return json.loads(out.getvalue())


@pytest.fixture
def images(tmp_path):
    write_image(tmp_path / "a.png")
    write_image(tmp_path / "b.png", color=(10, 200, 10))
    return tmp_path


def _unrated(pair_id, **fields):
    return {**mmrb2_pair(pair_id, scores=(), chosen=""), **fields}


def test_a_gold_field_makes_the_pair_a_gold_check(tmp_path, images):
    path = write_jsonl(
        tmp_path / "pairs.jsonl",
        [
            *[_unrated(f"plain{n}") for n in range(12)],
            _unrated("g1", gold="B"),
            _unrated("g2", gold={"side": "a", "explanation": "A shows the red square"}),
            _unrated("g3", chosen="A", gold={"side": "A", "qualification": True}),
        ],
    )
    summary = _import(path, images)
    assert summary["gold"] == 3 and summary["pairs"] == 15
    golds = {g.pair.external_id: g for g in GoldAnswer.objects.select_related("pair")}
    assert {k: g.side for k, g in golds.items()} == {"g1": "B", "g2": "A", "g3": "A"}
    assert golds["g2"].explanation == "A shows the red square"
    assert golds["g3"].qualification and not golds["g1"].qualification
    statuses = dict(Pair.objects.values_list("external_id", "status"))
    assert statuses.pop("g1") == statuses.pop("g2") == statuses.pop("g3") == "gold"
    assert set(statuses.values()) == {"candidate"}
    call_command("queue_pairs", project="g", stdout=io.StringIO())
    # ... answered like any gold check, mixed into an annotator's queue.
    project = Pair.objects.first().project
    annotator = member("expert", project)
    task = project.tasks.get()
    seen = []
    while (assignment := assignment_claim(annotator, task)) is not None:
        seen.append(assignment.pair.external_id)
        rating_submit(assignment.pk, annotator, RatingInput(overall=2))
    assert {"g1", "g2"} & set(seen[:10])  # the first gold check within the first 10 pairs
    assert "g3" not in seen  # the qualification set is not mixed into the queue


@pytest.mark.parametrize(
    "gold, message",
    [
        ("tie", "must be 'A' or 'B'"),
        (3, "gold must be"),
        ({"side": "A", "weight": 2}, "unknown keys"),
        ({"side": "B", "qualification": "yes"}, "true or false"),
        ({"side": "B", "explanation": "x" * 2001}, "at most 2000"),
    ],
)
def test_a_wrong_gold_field_refuses_the_file(tmp_path, images, gold, message):
    path = write_jsonl(tmp_path / "pairs.jsonl", [_unrated("ok"), _unrated("bad", gold=gold)])
    with pytest.raises(CommandError, match=message):
        _import(path, images)
    assert not Pair.objects.exists()


def test_a_gold_record_with_ratings_is_refused(tmp_path, images):
    path = write_jsonl(tmp_path / "pairs.jsonl", [mmrb2_pair("rated") | {"gold": "A"}])
    with pytest.raises(CommandError, match="carries no human_annotations"):
        _import(path, images)
    assert not Pair.objects.exists()


def test_gold_on_a_pair_already_rated_refuses_the_reimport(tmp_path, images):
    path = write_jsonl(tmp_path / "pairs.jsonl", [_unrated("p1"), _unrated("p2")])
    _import(path, images)
    call_command("queue_pairs", project="g", stdout=io.StringIO())
    pair = Pair.objects.get(external_id="p1")
    annotator = member("expert", pair.project)
    rating_submit(assignment_claim(annotator, pair.task).pk, annotator, RatingInput(overall=6))
    rated = Pair.objects.filter(rating_count__gt=0).get().external_id
    again = write_jsonl(tmp_path / "again.jsonl", [_unrated("p1", gold="A"), _unrated("p2")])
    if rated == "p2":
        again = write_jsonl(tmp_path / "again.jsonl", [_unrated("p1"), _unrated("p2", gold="A")])
    with pytest.raises(CommandError, match="gold checks refused.*nobody rated"):
        _import(again, images)
    assert not GoldAnswer.objects.exists()
    # The pair nobody rated can be made gold by a re-import of the same content.
    fine = rated == "p1" and "p2" or "p1"
    records = [_unrated(p, gold="B") if p == fine else _unrated(p) for p in ("p1", "p2")]
    summary = _import(write_jsonl(tmp_path / "third.jsonl", records), images)
    assert summary["gold"] == 1 and summary["unchanged"] == 2
    assert GoldAnswer.objects.get().pair.external_id == fine


def test_a_parquet_gold_column(tmp_path):
    """MMRB2's Hugging Face layout with a `gold` column beside `chosen`."""
    image = {"bytes": image_bytes((200, 40, 40)), "path": "a.png"}
    other = {"bytes": image_bytes((10, 200, 10)), "path": "b.png"}
    rows = [
        {
            "pair_id": f"hf{n}",
            "prompt_text": "draw a square",
            "prompt_images": [],
            "response_a_text": "<image_1>",
            "response_a_images": [image],
            "response_b_text": "<image_1>",
            "response_b_images": [other],
            "response_a_model": "gen-1",
            "response_b_model": "gen-2",
            "chosen": "",
            "human_annotations": [],
            "gold": gold,
        }
        for n, gold in enumerate(["A", None, "B"])
    ]
    pq.write_table(pa.Table.from_pylist(rows), tmp_path / "gold.parquet")
    summary = _import(tmp_path / "gold.parquet", file_format="parquet")
    assert summary["pairs"] == 3 and summary["gold"] == 2
    sides = dict(GoldAnswer.objects.values_list("pair__external_id", "side"))
    assert sides == {"hf0": "A", "hf2": "B"}


def test_a_reimport_never_rewrites_an_answered_gold_check(tmp_path, images):
    records = [*(_unrated(f"p{n}") for n in range(12)), _unrated("g", gold="A")]
    _import(write_jsonl(tmp_path / "first.jsonl", records), images)
    call_command("queue_pairs", project="g", stdout=io.StringIO())
    gold = GoldAnswer.objects.get()
    annotator = member("expert", gold.pair.project)
    while (assignment := assignment_claim(annotator, gold.pair.task)) is not None:
        rating_submit(assignment.pk, annotator, RatingInput(overall=2))
        if assignment.pair_id == gold.pair_id:
            break
    assert gold.pair.ratings.exists()
    records[-1] = _unrated("g", gold="B")
    with pytest.raises(CommandError, match="g already answered"):
        _import(write_jsonl(tmp_path / "again.jsonl", records), images)
    assert GoldAnswer.objects.get().side == "A"
    records[-1] = _unrated("g", gold="A")  # the same gold again changes nothing
    assert _import(write_jsonl(tmp_path / "same.jsonl", records), images)["unchanged"] == 13


def test_a_null_explanation_in_a_gold_struct_is_no_explanation(tmp_path):
    image = {"bytes": image_bytes((200, 40, 40)), "path": "a.png"}
    other = {"bytes": image_bytes((10, 200, 10)), "path": "b.png"}
    row = {
        "pair_id": "s0", "prompt_text": "p", "prompt_images": [],
        "response_a_text": "<image_1>", "response_a_images": [image],
        "response_b_text": "<image_1>", "response_b_images": [other],
        "response_a_model": "gen-1", "response_b_model": "gen-2",
        "chosen": "", "human_annotations": [],
        "gold": {"side": "B", "explanation": None, "qualification": None},
    }  # fmt: skip
    pq.write_table(pa.Table.from_pylist([row]), tmp_path / "struct.parquet")
    assert _import(tmp_path / "struct.parquet", file_format="parquet")["gold"] == 1
    assert GoldAnswer.objects.get().explanation == ""
