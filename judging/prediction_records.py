"""Prediction and score files (judges' verdicts) read one record at a time, each record's size
known before any of it is parsed.

A record of a prediction file is one pair's entry (`{"forward": [...], "reverse": [...]}`, at
most MAX_SAMPLES samples per order), of a score file one row: small, whatever the file. The
general JSON walk (content/importing/json_stream.py) bounds a record by
ARBITER_IMPORT_MAX_RECORD_BYTES (16 MiB, for pair files whose records carry long texts) and
finds a record's end by parsing what it has read so far, again after each chunk: a 23 MB file
of one entry was parsed over and over, up to the limit, before its refusal (14.7 s and 482 MB
over idle through the API).

Here the record limit is ARBITER_VERDICT_MAX_RECORD_BYTES, and a record (an object, a list or
a string) is first scanned, not parsed: a regular expression walks its strings and brackets,
chunk by chunk, to its closing bracket. A record whose end is not within the limit is refused
as soon as the scan passes it, nothing of it parsed; one within the limit is then parsed
once. The scan also counts the nesting, so it refuses JSON deeper than MAX_JSON_DEPTH at the
same bracket as the general reader's gauge, which is not run here: splitting every chunk on
its quotes, it held several times a dense chunk's size. The file is read in pieces of a
sixteenth of the limit (at most the general reader's chunk), so reading a file holds about
twice the limit (the text read, and the buffer it is copied into as it grows) and the parse
of the one record that fits (bench/predictions.py measures it).
"""

import re
from collections.abc import Iterator
from pathlib import Path

from django.conf import settings

from content.importing import json_stream
from content.importing.errors import ImportFailed
from content.importing.json_stream import JsonReader
from content.importing.upload_limits import MAX_JSON_DEPTH, DepthGauge

# What the walk stops at: a container that holds no other (its depth comes back where it
# was: the most common token by far, taken whole), a whole string (escapes included), a
# bracket, or a string's opening quote whose end has not been read yet.
_STRING = r'"[^"\\]*(?:\\.[^"\\]*)*"'
_TOKEN = re.compile(rf'[\[{{](?:[^"\[\]{{}}]|{_STRING})*[\]}}]|{_STRING}|[\[\]{{}}]|"')
_OPENING = frozenset("[{")


def max_prediction_record_bytes() -> int:
    return settings.ARBITER_VERDICT_MAX_RECORD_BYTES


def record_too_large(limit: int) -> str:
    return (
        f"the record is larger than {limit} bytes (ARBITER_VERDICT_MAX_RECORD_BYTES: one "
        "pair's predictions, or one row of scores); refused before parsing"
    )


class PredictionReader(JsonReader):
    """JsonReader whose records are measured before they are parsed (module docstring)."""

    def __init__(self, path: Path):
        super().__init__(path, named=True)
        self.limit = max_prediction_record_bytes()
        self.gauge = _NoGauge()  # the scan counts the nesting (module docstring)
        self.piece = max(4096, min(json_stream.CHUNK_CHARS, self.limit // 16))

    def __enter__(self) -> "PredictionReader":
        super().__enter__()
        self.file = _ShortReads(self.file, self.piece)  # type: ignore[assignment]
        return self

    def value(self, number: int | None = None) -> object:
        if self.peek() not in ('"', "[", "{"):
            return super().value(number)  # a number or a word: a few characters
        end = self._record_end(number)
        return super().value(number) if end is None else self._parsed(end, number)

    def _record_end(self, number: int | None) -> int | None:
        """Where the string or container at `position` ends in the buffer, read up to it;
        None when the file ends first (the parser then says what is missing). Refused once
        the record would pass the limit, or nest too deep."""
        depth, resume = 0, 0  # resume: where the walk goes on, from the record's start
        while True:
            start = self.position
            resume += start
            for token in _TOKEN.finditer(self.buffer, resume):
                text = token.group()
                kind = text[0]
                if text == '"':  # a string whose end is in the next piece
                    resume = token.start()
                    break
                if kind in _OPENING and len(text) > 1:  # a container holding none
                    if depth + 1 >= MAX_JSON_DEPTH:
                        self.fail_deep(token.start(), number)
                elif kind != '"':
                    depth += 1 if kind in _OPENING else -1
                    # The file's outer list or object is one more level.
                    if depth >= MAX_JSON_DEPTH:
                        self.fail_deep(token.start(), number)
                if depth <= 0:
                    if token.end() - start > self.limit:
                        raise ImportFailed(f"{self.what}{record_too_large(self.limit)}", number)
                    return token.end()
            else:
                resume = len(self.buffer)
            resume -= start
            if len(self.buffer) - start > self.limit:
                raise ImportFailed(f"{self.what}{record_too_large(self.limit)}", number)
            if self.eof:
                return None
            self._read(wanted=1)  # one more piece (a sixteenth of the limit)

    def fail_deep(self, offset: int, number: int | None):
        raise ImportFailed(
            f"{self.what}JSON nested deeper than {MAX_JSON_DEPTH} levels (at "
            f"{self._where(offset)}); refused before parsing",
            number,
        )

    def _parsed(self, end: int, number: int | None) -> object:
        """The record between `position` and `end`, parsed once (the general reader's parser
        and messages: it is whole in the buffer, so it never asks for more)."""
        self.eof, eof = True, self.eof  # the parse must not read on: the record is whole
        try:
            value = super().value(number)
        finally:
            self.eof = eof
        if self.position != end:
            self.fail("expected ',' after a record", number)
        return value


class _ShortReads:
    """A text file whose reads return at most `most` characters: the general reader asks for
    a whole chunk at a time, which would grow a record's buffer by more than the limit's
    sixteenth."""

    def __init__(self, file, most: int):
        self.file, self.most = file, most

    def read(self, size: int = -1) -> str:
        return self.file.read(self.most if size < 0 else min(size, self.most))

    def close(self) -> None:
        self.file.close()


class _NoGauge(DepthGauge):
    """The general reader's depth check, left out: the walk counts the nesting itself."""

    def feed(self, chunk: str) -> None:
        pass


def prediction_object_records(path: Path, expected: str) -> Iterator[tuple[int, str, object]]:
    """(position, key, value) of each member of a file holding one JSON object."""
    with PredictionReader(path) as reader:
        if reader.peek() != "{":
            raise ImportFailed(f"expected {expected}")
        for number, key in reader.members():
            yield number, key, reader.value(number)
        reader.end()


def prediction_list_records(path: Path, expected: str) -> Iterator[tuple[int, object]]:
    """(position, value) of each value of a file holding one JSON list."""
    with PredictionReader(path) as reader:
        if reader.peek() != "[":
            raise ImportFailed(f"expected {expected}")
        yield from reader.array()
        reader.end()
