"""`import_pairs` writes a file a batch of records at a time inside one transaction
(pair_import_batches.py). With batches of two records, a file of several batches imports as it
would in one batch, and a refusal in a later batch leaves nothing of the earlier ones."""

import pytest

from annotation.models import GoldAnswer
from content.models import Pair
from imports.services import pair_import
from tests.factories import mmrb2_pair, write_jsonl
from tests.importing.helpers import (
    import_error,
    media_files,
    run_import,
    table_counts,
)

pytestmark = pytest.mark.django_db


@pytest.fixture
def batches_of_two(monkeypatch):
    monkeypatch.setattr(pair_import, "BATCH", 2)


def _shared_prompt(record: dict) -> dict:
    record["prompt_metadata"] = {"id": "shared"}
    return record


def _earlier(tmp_path, images, project):
    """A pair showing a.png and b.png under the shared prompt, imported before."""
    path = write_jsonl(tmp_path / "earlier.jsonl", [_shared_prompt(mmrb2_pair("old"))])
    run_import(path, project=project, images=images)


def _file_of_three_batches(tmp_path):
    records = [
        _shared_prompt(mmrb2_pair("n1", image_a="a.png", image_b="c.png")),
        mmrb2_pair("n2", image_a="b.png", image_b="a.png", scores=()),
        _shared_prompt(mmrb2_pair("old")),  # unchanged
        _shared_prompt(mmrb2_pair("n3", image_a="c.png", image_b="b.png", chosen="B")),
        mmrb2_pair("n4", image_a="prompt/p.png", image_b="c.png", scores=(1, 2, 2)),
    ]
    return write_jsonl(tmp_path / "pairs.jsonl", records)


def test_a_file_of_several_batches_is_summed_up_as_one_batch_would_be(
    tmp_path, images, monkeypatch
):
    path = _file_of_three_batches(tmp_path)
    _earlier(tmp_path, images, "whole")
    whole = run_import(path, project="whole", images=images)
    monkeypatch.setattr(pair_import, "BATCH", 2)
    _earlier(tmp_path, images, "batched")
    batched = run_import(path, project="batched", images=images)

    for summary in (whole, batched):
        del summary["project"], summary["seconds"]
    assert batched == whole
    assert (batched["records"], batched["pairs"], batched["unchanged"]) == (5, 4, 1)
    # Each image and prompt counted once, though batches 1 to 3 show c.png and two show the
    # shared prompt; reused: what the project showed before this file.
    assert batched["images"] == {"new": 2, "reused": 2}
    assert batched["prompts"] == {"new": 2, "reused": 1}
    assert (batched["responses"], batched["ratings"]) == (8, 9)
    assert Pair.objects.filter(project__slug="batched").count() == 5


def test_a_refusal_in_a_later_batch_removes_what_the_earlier_batches_wrote(
    tmp_path, images, media_root, monkeypatch, batches_of_two
):
    _earlier(tmp_path, images, "proj")
    counts, files = table_counts(), sorted(media_files(media_root))
    files_after_each_batch = []
    write_pairs = pair_import._write_pairs

    def noting_files(*args, **kwargs):
        write_pairs(*args, **kwargs)
        files_after_each_batch.append(len(media_files(media_root)))

    monkeypatch.setattr(pair_import, "_write_pairs", noting_files)
    changed = _shared_prompt(mmrb2_pair("old", chosen="B"))
    records = [
        mmrb2_pair("n1", image_b="c.png"),
        mmrb2_pair("n2", prompt=[["image", "prompt/p.png"]]),
        changed,
    ]

    message = import_error(write_jsonl(tmp_path / "pairs.jsonl", records), images=images)

    assert "record 3" in message and "different content" in message
    assert files_after_each_batch[0] > len(files)  # the first batch stored its new images
    assert table_counts() == counts
    assert sorted(media_files(media_root)) == files


def test_gold_checks_of_every_batch_are_set(tmp_path, images, batches_of_two):
    records = [mmrb2_pair(f"u{number}", scores=(), chosen="") for number in range(5)]
    for number in (0, 3, 4):
        records[number]["gold"] = "A" if number else "B"
    summary = run_import(write_jsonl(tmp_path / "pairs.jsonl", records), images=images)
    assert summary["gold"] == 3
    assert dict(GoldAnswer.objects.values_list("pair__external_id", "side")) == {
        "u0": "B",
        "u3": "A",
        "u4": "A",
    }


def test_a_gold_check_refused_in_a_later_batch_writes_nothing(
    tmp_path, images, media_root, batches_of_two
):
    elsewhere = mmrb2_pair("elsewhere", scores=(), chosen="")
    run_import(write_jsonl(tmp_path / "other.jsonl", [elsewhere]), task="other", images=images)
    counts, files = table_counts(), sorted(media_files(media_root))
    records = [
        mmrb2_pair(f"u{number}", image_b="c.png", scores=(), chosen="") for number in range(3)
    ]
    elsewhere["gold"] = "A"  # unchanged, but its pair lives in another task
    path = write_jsonl(tmp_path / "pairs.jsonl", [*records, elsewhere])

    message = import_error(path, images=images)

    assert "gold checks refused" in message and "no such pair in task t2i" in message
    assert table_counts() == counts
    assert sorted(media_files(media_root)) == files
