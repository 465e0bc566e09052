"""Limits every import applies to hostile input, whatever its format.

- JSON nesting: at most MAX_JSON_DEPTH levels of arrays and objects, checked on the raw text
  BEFORE json.loads sees it (CPython's parser recurses once per level: "[" * 100000 is a
  RecursionError, and a few hundred levels already strain every recursive walk after it).
- Text: no string of a record (prompt and response text parts, rationales, notes, metadata
  strings and keys, ids) may be longer than settings.ARBITER_MAX_TEXT_CHARS characters.
Both are refused with ImportFailed, naming the record (its line or row number) and the limit.
"""

import re
from itertools import accumulate

from django.conf import settings

from content.importing.errors import ImportFailed

MAX_JSON_DEPTH = 64

# What JSON holds outside its strings besides brackets: deleted by str.translate (fast);
# anything else (invalid JSON) is deleted by the regular expression after it.
_PLAIN = str.maketrans("", "", " \t\r\n,:0123456789.-+eEtrufalsn")
_NOT_BRACKET = re.compile(r"[^\[\]{}]+")
_TOKEN = re.compile(r'"[^"\\]*(?:\\.[^"\\]*)*"|[\[\]{}]', re.DOTALL)
_STEP = {"[": 1, "{": 1, "]": -1, "}": -1}


def _deeper_than(text: str, limit: int) -> bool:
    """Whether arrays and objects in JSON text nest more than `limit` levels (brackets inside
    strings do not count). Linear: the strings are cut out by a regular expression, then the
    brackets left are summed. For invalid JSON the answer is some answer; json.loads then
    reports what is wrong with it."""
    if text.count("[") + text.count("{") <= limit:
        return False  # cheap, and the common case for a JSONL line
    # Cut out the strings: drop escaped backslashes, then escaped quotes, and every other
    # piece between quotes is outside a string.
    outside = "".join(text.replace("\\\\", "").replace('\\"', "").split('"')[0::2])
    brackets = _NOT_BRACKET.sub("", outside.translate(_PLAIN))
    return max(accumulate(map(_STEP.__getitem__, brackets)), default=0) > limit


def json_too_deep(text: str, limit: int = MAX_JSON_DEPTH) -> str | None:
    """None when `text` nests at most `limit` levels, else a message saying where it goes
    deeper (line and column of the first bracket past the limit)."""
    if not _deeper_than(text, limit):
        return None
    depth = 0
    for match in _TOKEN.finditer(text):  # only on refusal: find the place to name
        step = _STEP.get(match.group())
        if step is None:
            continue
        depth += step
        if depth > limit:
            offset = match.start()
            line = text.count("\n", 0, offset) + 1
            column = offset - (text.rfind("\n", 0, offset) + 1) + 1
            return (
                f"JSON nested deeper than {limit} levels (at line {line} column {column}); "
                "refused before parsing"
            )
    return f"JSON nested deeper than {limit} levels; refused before parsing"


def require_json_depth(text: str, number: int | None = None, what: str = "") -> None:
    """Raise ImportFailed (naming record `number`) when `text` nests too deep."""
    problem = json_too_deep(text)
    if problem is not None:
        raise ImportFailed(f"{what}{problem}", number)


def max_text_chars() -> int:
    """The text limit; errors.require_storable_text(max_chars=...) applies it to a record."""
    return settings.ARBITER_MAX_TEXT_CHARS


class DepthGauge:
    """`json_too_deep` for a file read in chunks: feed it every chunk before the parser sees
    it. It keeps what a chunk leaves open (inside a string or not, a trailing backslash, the
    depth, the line and column) and raises ImportFailed, naming the line and column, at the
    first bracket past MAX_JSON_DEPTH. Linear, like `_deeper_than`."""

    def __init__(self, what: str = "", limit: int = MAX_JSON_DEPTH):
        self.what, self.limit = what, limit
        self.depth, self.in_string, self.backslash = 0, False, False
        self.lines, self.column = 0, 0  # newlines fed so far; characters since the last one

    def feed(self, chunk: str) -> None:
        start = (self.depth, self.in_string, self.backslash)
        text = ("\\" if self.backslash else "") + chunk
        text = text.replace("\\\\", "")
        self.backslash = text.endswith("\\")  # escapes the next chunk's first character
        pieces = text.removesuffix("\\").replace('\\"', "").split('"')
        outside = pieces[1::2] if self.in_string else pieces[0::2]
        self.in_string ^= len(pieces) % 2 == 0
        brackets = _NOT_BRACKET.sub("", "".join(outside).translate(_PLAIN))
        opened = brackets.count("[") + brackets.count("{")
        if self.depth + opened > self.limit and (
            max(accumulate(map(_STEP.__getitem__, brackets), initial=self.depth)) > self.limit
        ):
            self._refuse(chunk, *start)
        self.depth += 2 * opened - len(brackets)
        newlines = chunk.count("\n")
        self.lines += newlines
        self.column = len(chunk) - chunk.rfind("\n") - 1 if newlines else self.column + len(chunk)

    def _refuse(self, chunk: str, depth: int, in_string: bool, backslash: bool):
        """Walk the chunk (only on refusal) to name the place of the bracket past the limit."""
        offset = 0
        for offset, char in enumerate(chunk):  # noqa: B007 (the place is used below)
            if backslash:
                backslash = False
            elif in_string:
                backslash, in_string = char == "\\", char != '"'
            elif char == '"':
                in_string = True
            elif char in _STEP:
                depth += _STEP[char]
                if depth > self.limit:
                    break
        newlines = chunk.count("\n", 0, offset)
        line = self.lines + newlines + 1
        column = offset - chunk.rfind("\n", 0, offset) if newlines else self.column + offset + 1
        raise ImportFailed(
            f"{self.what}JSON nested deeper than {self.limit} levels (at line {line} column "
            f"{column}); refused before parsing"
        )
