"""A JSON import refuses every record above ARBITER_IMPORT_MAX_RECORD_BYTES, wherever it falls
in the file's chunks: a record just under the limit must not let the next one, read in the
same larger chunk, be parsed whole at up to twice the limit."""

import pytest

from content.importing import json_stream
from content.importing.errors import ImportFailed

LIMIT = 64 * 1024


def _list_of(size: int) -> str:
    return "[" + ",".join(["[]"] * (size // 3)) + "]"


@pytest.fixture
def small_chunks(settings, monkeypatch):
    settings.ARBITER_IMPORT_MAX_RECORD_BYTES = LIMIT
    monkeypatch.setattr(json_stream, "CHUNK_CHARS", 16 * 1024)


@pytest.mark.parametrize("second", [int(LIMIT * 1.6), LIMIT + 200])
def test_a_record_over_the_limit_after_one_just_under_it_is_refused(tmp_path, small_chunks, second):
    path = tmp_path / "records.json"
    path.write_text(f"[{_list_of(LIMIT - 100)},{_list_of(second)}]")
    records = json_stream.json_list_records(path)
    assert next(records)[0] == 1
    with pytest.raises(ImportFailed, match="larger than 65536 bytes") as refused:
        next(records)
    assert refused.value.record == 2


def test_records_under_the_limit_are_all_read(tmp_path, small_chunks):
    path = tmp_path / "records.json"
    path.write_text("[" + ",".join(_list_of(LIMIT - 100) for _ in range(5)) + "]")
    assert [number for number, _ in json_stream.json_list_records(path)] == [1, 2, 3, 4, 5]
