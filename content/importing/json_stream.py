"""JSON and JSONL files read record by record: an import's memory follows its largest record,
never its file (a 21 MB `{"pairs": [[], [], ...]}` once cost 650 MB before its refusal).

- JSONL: one line at a time (split on "\\n" only: JSON allows U+2028 raw inside strings), each
  depth-checked, then parsed by `json.loads`.
- JSON: the file is read in chunks of CHUNK_CHARS; every chunk passes limits.DepthGauge
  before the parser sees it, so nesting is refused before parsing as for a line. The outer
  list or object is walked here; each of its values (a record) is parsed by the standard
  library's decoder (`raw_decode`), the same parser as for a JSONL line.
- A record (a line, or a value of the outer list or object) above
  settings.ARBITER_IMPORT_MAX_RECORD_BYTES is refused: parsing multiplies a record's size
  (an empty list is 2 bytes of text and 56 of memory), so this bounds the memory of one.
Every problem is an ImportFailed naming the record (its line for JSONL) or the line and
column, and never the server's path of the file.
"""

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

from django.conf import settings

from content.importing.errors import ImportFailed
from content.importing.upload_limits import DepthGauge, require_json_depth

CHUNK_CHARS = 1024**2
_SPACE = re.compile(r"[ \t\n\r]*")
# Fast paths of the walk (a file of millions of small records spends its time here): the
# separator after a value, and a member's key without escapes with its colon.
_NEXT = re.compile(r"[ \t\n\r]*([,\]}])[ \t\n\r]*")
_PLAIN_KEY = re.compile(r'[ \t\n\r]*"([^"\\\x00-\x1f]*)"[ \t\n\r]*:[ \t\n\r]*')
_DECODER = json.JSONDecoder()
# How far from the end of what was read a parse error may be and still only mean that the
# record goes on in the next chunk (the longest token cut short: a \\uXXXX escape, a number).
_CUT_SHORT = 32
_SPACE_OR_END = ("", " ", "\t", "\n", "\r")


def _after_space(text: str, start: int) -> int:
    """Where the white space at `start` ends (`start` itself when there is none)."""
    spaces = _SPACE.match(text, start)  # `*` matches everywhere, if only ""
    return start if spaces is None else spaces.end()


def max_record_bytes() -> int:
    return settings.ARBITER_IMPORT_MAX_RECORD_BYTES


def require_file_size(path: Path, limit: int, setting: str) -> None:
    """Refuse a file above `limit` bytes before reading it (`setting` names the limit)."""
    try:
        size = path.stat().st_size
    except OSError as exc:
        raise ImportFailed(f"cannot read {path.name}: {exc.strerror}") from None
    if size > limit:
        raise ImportFailed(
            f"{path.name} is {size} bytes, above the {limit} bytes limit ({setting})"
        )


def jsonl_records(path: Path) -> Iterator[tuple[int, object]]:
    """(line number, value) of each line that is not blank."""
    limit = max_record_bytes()
    try:
        with open(path, "rb") as file:
            number = 0
            while raw := file.readline(limit + 1):
                number += 1
                if len(raw) > limit and not raw.endswith(b"\n"):
                    raise ImportFailed(_too_large(limit), number)
                try:
                    line = raw.decode("utf-8").removesuffix("\n").removesuffix("\r")
                except UnicodeDecodeError as exc:
                    problem = f"the line is not UTF-8 text ({exc.reason})"
                    raise ImportFailed(problem, number) from None
                if line.strip():
                    yield number, _line_value(line, number)
    except OSError as exc:
        raise ImportFailed(f"cannot read {path.name}: {exc.strerror}") from None


def _problem(exc: json.JSONDecodeError) -> str:
    """The decoder's message without its own trailing "at" ("Unterminated string starting
    at", "Invalid control character ... at"): ours names the place after it."""
    return exc.msg.removesuffix(" at")


def _line_value(line: str, number: int) -> object:
    require_json_depth(line, number)
    try:
        return json.loads(line)
    except json.JSONDecodeError as exc:
        raise ImportFailed(f"invalid JSON: {_problem(exc)} at column {exc.colno}", number) from None
    except ValueError as exc:  # a number too long to convert
        raise ImportFailed(f"invalid JSON: {str(exc)[:200]}", number) from None


class JsonReader:
    """One JSON file, walked from its outer value down to its records. Use as a context
    manager; `array()` and `members()` yield the outer values; `end()` checks that nothing
    follows. Errors name the line and column."""

    def __init__(self, path: Path, named: bool = False):
        # `named`: messages name the file (a prediction file's do; a pair file's name is
        # the upload's, and its errors name records).
        self.path, self.what = path, f"{path.name}: " if named else ""
        self.invalid = f"{path.name} is not valid JSON" if named else "invalid JSON"
        self.limit = max_record_bytes()
        self.gauge = DepthGauge(self.what)
        self.buffer, self.position, self.eof = "", 0, False
        self.lines, self.column = 0, 0  # of the text dropped from the buffer
        self.file: TextIO | None = None  # open inside `with`

    def __enter__(self) -> "JsonReader":
        try:
            self.file = open(self.path, encoding="utf-8", newline="")
        except OSError as exc:
            raise ImportFailed(f"cannot read {self.path.name}: {exc.strerror}") from None
        return self

    def __exit__(self, *exc_info) -> None:
        if self.file is not None:
            self.file.close()

    # -- reading

    def _read(self, wanted: int = CHUNK_CHARS) -> None:
        """Append at least `wanted` more characters (fewer at the end of the file), dropping
        what was already parsed."""
        dropped = self.buffer[: self.position]
        newlines = dropped.count("\n")
        self.lines += newlines
        self.column = (
            len(dropped) - dropped.rfind("\n") - 1 if newlines else self.column + len(dropped)
        )
        if self.file is None:
            raise RuntimeError("JsonReader is read inside its `with` block")
        pieces, got = [self.buffer[self.position :]], 0
        while got < wanted:
            try:
                chunk = self.file.read(CHUNK_CHARS)
            except UnicodeDecodeError as exc:
                raise ImportFailed(f"{self.path.name} is not UTF-8 text ({exc.reason})") from None
            except OSError as exc:
                raise ImportFailed(f"cannot read {self.path.name}: {exc.strerror}") from None
            if not chunk:
                self.eof = True
                break
            self.gauge.feed(chunk)  # before any parser sees it
            pieces.append(chunk)
            got += len(chunk)
        self.buffer, self.position = "".join(pieces), 0

    def _where(self, offset: int) -> str:
        newlines = self.buffer.count("\n", 0, offset)
        line = self.lines + newlines + 1
        if newlines:
            column = offset - self.buffer.rfind("\n", 0, offset)
        else:
            column = self.column + offset + 1
        return f"line {line} column {column}"

    def peek(self) -> str:
        """The next character that is not white space; "" at the end of the file."""
        while True:
            self.position = _after_space(self.buffer, self.position)
            if self.position < len(self.buffer) or self.eof:
                return self.buffer[self.position : self.position + 1]
            self._read()

    def take(self, expected: str, wanted: str) -> None:
        if self.peek() != expected:
            self.fail(f"expected {wanted}")
        self.position += 1

    def fail(self, problem: str, number: int | None = None):
        found = self.buffer[self.position : self.position + 1]
        at = f"at {self._where(self.position)}" if found else "at the end of the file"
        raise ImportFailed(f"{self.invalid}: {problem} {at}", number)

    def value(self, number: int | None = None) -> object:
        """The next complete value (a record), parsed; refused above the record limit."""
        if self.buffer[self.position : self.position + 1] in _SPACE_OR_END:
            self.peek()
        while True:
            start, size = self.position, len(self.buffer) - self.position
            try:
                value, end = _DECODER.raw_decode(self.buffer, start)
            except json.JSONDecodeError as exc:
                cut_short = exc.pos >= len(self.buffer) - _CUT_SHORT or exc.msg.startswith(
                    "Unterminated string"
                )
                if self.eof or not cut_short:
                    raise ImportFailed(
                        f"{self.invalid}: {_problem(exc)} at {self._where(exc.pos)}", number
                    ) from None
            except ValueError as exc:  # a number too long to convert
                raise ImportFailed(f"{self.invalid}: {str(exc)[:200]}", number) from None
            else:
                if end - start > self.limit:  # whole in what was read, and still too large
                    raise ImportFailed(f"{self.what}{_too_large(self.limit)}", number)
                # A list, object or string ends with its closing character; a number or word
                # at the end of what was read may go on in the next chunk.
                closed = isinstance(value, dict | list | str)
                if self.eof or closed or end < len(self.buffer) - _CUT_SHORT:
                    self.position = end
                    return value
            if size > self.limit:
                raise ImportFailed(f"{self.what}{_too_large(self.limit)}", number)
            # Doubling (a long record parses ~twice), but never past the limit from the
            # record's start (plus a chunk): no parse ever sees much more than one record's worth.
            self._read(wanted=max(1, min(max(size, CHUNK_CHARS), self.limit + _CUT_SHORT - size)))

    def array(self, first: int = 1) -> Iterator[tuple[int, object]]:
        """(number, value) of each value of the list that comes next."""
        self.take("[", "a list")
        number = first - 1
        if self.peek() == "]":
            self.position += 1
            return
        while True:
            number += 1
            yield number, self.value(number)
            if self._next() == ",":
                continue
            self.take("]", "',' or ']' after a value")
            return

    def _next(self) -> str:
        """Take the ',' after a value (and the space after it); else only peek."""
        found = _NEXT.match(self.buffer, self.position)
        if found and found.group(1) == "," and found.end() < len(self.buffer):
            self.position = found.end()
            return ","
        if self.peek() == ",":
            self.position += 1
            return ","
        return self.peek()

    def members(self) -> Iterator[tuple[int, str]]:
        """(number, key) of each member of the object that comes next; the caller reads the
        member's value (`value()` or `array()`) before asking for the next key."""
        self.take("{", "an object")
        if self.peek() == "}":
            self.position += 1
            return
        number = 0
        while True:
            number += 1
            plain = _PLAIN_KEY.match(self.buffer, self.position)
            if plain and plain.end() < len(self.buffer):
                key, self.position = plain.group(1), plain.end()
            else:
                if self.peek() != '"':
                    self.fail("expected a key in double quotes")
                key = self.value(number)
                self.take(":", "':' after a key")
            yield number, key
            if self._next() == ",":
                continue
            self.take("}", "',' or '}' after a value")
            return

    def end(self) -> None:
        if self.peek():
            self.fail("unexpected data after the end of the JSON value")


def _too_large(limit: int) -> str:
    return (
        f"the record is larger than {limit} bytes (ARBITER_IMPORT_MAX_RECORD_BYTES); "
        "refused before parsing"
    )


def json_list_records(
    path: Path, named: bool = False, expected: str = "a JSON list of records"
) -> Iterator[tuple[int, object]]:
    """(position, value) of each value of a file holding one JSON list."""
    with JsonReader(path, named) as reader:
        if reader.peek() != "[":
            raise ImportFailed(f"expected {expected}")
        yield from reader.array()
        reader.end()


def json_object_records(
    path: Path, named: bool = False, expected: str = "a JSON object"
) -> Iterator[tuple[int, str, object]]:
    """(position, key, value) of each member of a file holding one JSON object."""
    with JsonReader(path, named) as reader:
        if reader.peek() != "{":
            raise ImportFailed(f"expected {expected}")
        for number, key in reader.members():
            yield number, key, reader.value(number)
        reader.end()


def mmrb2_records(path: Path) -> Iterator[tuple[int, object]]:
    """(position, pair) of each value of the `pairs` list of an MMRB2 file; its other
    members are parsed (bounded like a record) and left aside."""
    expected = 'expected an MMRB2 file: {"pairs": [...]}'
    with JsonReader(path) as reader:
        if reader.peek() != "{":
            raise ImportFailed(expected)
        seen = False
        for _number, key in reader.members():
            if key != "pairs":
                reader.value()
                continue
            if seen:
                raise ImportFailed('the MMRB2 file holds "pairs" twice')
            if reader.peek() != "[":
                raise ImportFailed(expected)
            seen = True
            yield from reader.array()
        if not seen:
            raise ImportFailed(expected)
        reader.end()
