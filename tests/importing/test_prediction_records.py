"""A prediction or score file's records are measured before they are parsed
(judging/prediction_records.py): one pair's entry above ARBITER_VERDICT_MAX_RECORD_BYTES is
refused, through the API with a 400 naming the limit, having read little more than the limit
and parsed none of it; entries within it read exactly as the standard library reads them."""

import json
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from content.importing import json_stream
from content.importing.errors import ImportFailed
from judging.models import Verdict
from judging.prediction_records import prediction_list_records, prediction_object_records
from judging.services.verdict_import import verdicts_import
from projects.models import Membership
from tests.api.conftest import token_client
from tests.conftest import SHARED_MMRB2
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

SAMPLE = '{"judgement": "A"},'  # the densest entry: a parse of it costs the most per byte


def one_entry_file(path, size: int, pair_id: str = "p1"):
    """A prediction file of `size` bytes holding a single pair's entry (too many samples)."""
    count = size // len(SAMPLE)
    path.write_text(f'{{"{pair_id}": {{"forward": [' + SAMPLE * count + '{"judgement": "B"}]}}')
    return path


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=2)


def test_an_entry_above_the_limit_is_refused_by_the_api_naming_the_limit(tmp_path, task, settings):
    settings.ARBITER_VERDICT_MAX_RECORD_BYTES = 64 * 1024
    client = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    client.raise_request_exception = False
    pair_id = task.pairs.order_by("pk").first().external_id
    content = one_entry_file(tmp_path / "predictions.json", 300 * 1024, pair_id).read_bytes()
    answer = client.post(
        "/api/verdicts/import/",
        {
            "project": "alpha",
            "task": "t2i",
            "judge": "ext",
            "file": SimpleUploadedFile("predictions.json", content),
        },
        format="multipart",
    )
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        "record 1: predictions.json: the record is larger than 65536 bytes "
        "(ARBITER_VERDICT_MAX_RECORD_BYTES: one pair's predictions, or one row of scores); "
        "refused before parsing"
    )
    assert not Verdict.objects.exists()


def test_a_23_mb_entry_is_refused_holding_about_twice_the_limit(tmp_path, task, settings):
    """The issue's file: 23 MB, one entry. Refused after reading the limit and a chunk, with
    no parse: the memory is the text read (about twice that, as a read copies the buffer),
    not its parse (the general reader parsed it whole, held 482 MB and took 14.7 s)."""
    limit = settings.ARBITER_VERDICT_MAX_RECORD_BYTES = 4 * 1024**2
    piece = limit // 16  # what the reader reads at a time
    path = one_entry_file(tmp_path / "predictions.json", 23 * 1024**2)
    pair_id = task.pairs.order_by("pk").first().external_id
    path.write_text(path.read_text().replace('"p1"', f'"{pair_id}"', 1))
    tracemalloc.start()
    try:
        with pytest.raises(ImportFailed, match="larger than 4194304 bytes"):
            verdicts_import(path, project_slug="alpha", task_slug="t2i", judge_name="ext")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    # The buffer at refusal (the limit and a piece), the copy it grew from, the decoding of
    # a piece, and the first chunk the reader read at the file's start.
    assert peak < 2 * (limit + piece) + 2 * piece + json_stream.CHUNK_CHARS, peak
    assert not Verdict.objects.exists()


@pytest.mark.parametrize("chunk", [7, 64, 4096])
def test_entries_read_as_the_standard_library_reads_them_whatever_the_chunks(
    tmp_path, monkeypatch, chunk
):
    """Strings holding brackets, quotes, backslashes and non-ASCII text, cut anywhere by the
    chunks, and records at the limit: the scan finds each end where the parser does."""
    monkeypatch.setattr(json_stream, "CHUNK_CHARS", chunk)
    data = {
        "p1": {"forward": [{"judgement": "A", "why": 'a "}]" in quotes \\ and ] { [ é 漢'}]},
        'p\\"2': {"reverse": [{"judgement": "tie", "raw": "\\\\"}, {"judgement": None}]},
        "p3": {"forward": [], "reverse": [{"judgement": "B", "n": [1, 2.5, -3e2, True]}]},
        "p4": "a string record [ {",
    }
    path = tmp_path / "predictions.json"
    path.write_text(json.dumps(data, ensure_ascii=False, indent=1))
    read = {key: value for _, key, value in prediction_object_records(path, "predictions")}
    assert read == json.loads(path.read_text())
    rows = tmp_path / "scores.json"
    rows.write_text(json.dumps(list(data.values()), ensure_ascii=False))
    assert [value for _, value in prediction_list_records(rows, "rows")] == list(data.values())


def test_a_record_at_the_limit_is_read_and_one_byte_more_is_refused(tmp_path, settings):
    settings.ARBITER_VERDICT_MAX_RECORD_BYTES = 1024
    entry = '{"forward": [{"judgement": "A", "why": "' + "x" * 1024
    at_limit = entry[:1020] + '"}]}'
    assert len(at_limit) == 1024
    path = tmp_path / "predictions.json"
    path.write_text('{"p1": ' + at_limit + "}")
    assert [key for _, key, _ in prediction_object_records(path, "p")] == ["p1"]
    path.write_text('{"p1": ' + at_limit.replace('"A"', '"AB"') + "}")
    with pytest.raises(ImportFailed, match="larger than 1024 bytes") as refused:
        list(prediction_object_records(path, "p"))
    assert refused.value.record == 1


@pytest.mark.parametrize("broken", ['{"p1": {"forward": [', '{"p1": {"forward": "ab'])
def test_a_file_that_ends_inside_an_entry_is_refused_as_invalid_json(tmp_path, broken):
    path = tmp_path / "predictions.json"
    path.write_text(broken)
    with pytest.raises(ImportFailed, match="predictions.json is not valid JSON"):
        list(prediction_object_records(path, "p"))


@pytest.mark.mmrb2
def test_mmrb2s_own_prediction_files_read_as_the_standard_library_reads_them():
    for path in sorted((SHARED_MMRB2 / "outputs").glob("*.json")):
        read = {key: value for _, key, value in prediction_object_records(path, "predictions")}
        assert read == json.loads(path.read_text()), path.name
