"""Reading a judge's answer, strictly.

The answer names the response shown first ("A" / image 1) or second ("B" / image 2), or a tie;
anything else is `invalid`. The judge's *final* answer counts: the last JSON object carrying
`better_response` (so a verdict quoted from a response earlier in the output, e.g. an
injection the judge repeats in its analysis, cannot win), or the last `BETTER IMAGE:` line.
Fenced, single-quoted, trailing-comma or unquoted-key JSON is repaired; the raw text is kept by
the caller whatever happens here.

A pointwise answer is a score: the last `SCORE: n` (or `RATING: n`, or a JSON `"score"`) on the
template's scale; a number outside the scale (`SCORE: 12` of 1-10) reads as no score.
"""

import json
import re

from content.importing.upload_limits import json_too_deep

FIRST, SECOND, TIE, INVALID = "A", "B", "tie", "invalid"

_FENCE = re.compile(r"```(?:json|JSON)?\s*(.*?)```", re.DOTALL)
_KEY_VALUE = re.compile(
    r"""better_response["']?\s*[:=]\s*(?:"([^"\n]{1,20})"|'([^'\n]{1,20})'|([A-Za-z_]+))"""
)
# MJ-Bench's answer line: `BETTER IMAGE: 2`, also `BETTER IMAGE: IMAGE-1`, `Image 2`, `[2]`
# and markdown bold around the header (as MJ-Bench's closed-model path reads them: the number
# after the header). The whole number counts: `12` is no image, never image 1.
# Every gap is a bounded run of one class: no nested or chained optional whitespace, so a
# hostile reply of blanks cannot make the search blow up (it stays linear).
_MJBENCH = re.compile(
    r"BETTER[ \t]{1,10}IMAGE[\s*]{0,10}[:=][\s*\[]{0,10}(?:image[\s_-]{0,3})?(\d{1,6})(?![\d.]*\d)",
    re.IGNORECASE,
)
_VALUES = {
    "a": FIRST,
    "response a": FIRST,
    "response_a": FIRST,
    "b": SECOND,
    "response b": SECOND,
    "response_b": SECOND,
    "tie": TIE,
    "equal": TIE,
    "same": TIE,
    "both": TIE,
    "neither": TIE,
}


def parse_json_answer(text: str) -> str:
    """A, B, tie or invalid, from an MMRB2-style JSON answer."""
    for candidate in reversed(_json_objects(text)):
        value = _find_key(candidate, "better_response")
        if value is not None:
            return _side(value)
    # Not parseable as JSON even after repair: the last explicit key/value pair, if any.
    matches = _KEY_VALUE.findall(text)
    return _side("".join(matches[-1])) if matches else INVALID


def parse_mjbench_answer(text: str) -> str:
    """A, B, tie or invalid, from `BETTER IMAGE: 1|2|0`."""
    matches = _MJBENCH.findall(text)
    if not matches:
        return INVALID
    return {"1": FIRST, "2": SECOND, "0": TIE}.get(matches[-1].lstrip("0") or "0", INVALID)


_SCORE = re.compile(
    r"""\b(?:score|rating)["']?[\s*]{0,10}[:=][\s*]{0,10}(-?\d{1,6}(?:\.\d{1,6})?)(?![\d.]*\d)""",
    re.IGNORECASE,
)


def parse_score(text: str, low: float, high: float) -> float | None:
    """The judge's final score if it lies in [low, high], else None."""
    matches = _SCORE.findall(text)
    if not matches:
        return None
    score = float(matches[-1])
    return score if low <= score <= high else None


def side_from_scores(score_a: float | None, score_b: float | None) -> str:
    """A pointwise verdict: the higher score's side, a tie when equal (MJ-Bench's `get_pred` at
    its threshold 0.0), invalid without both scores."""
    if score_a is None or score_b is None:
        return INVALID
    if score_a == score_b:
        return TIE
    return FIRST if score_a > score_b else SECOND


def parse_answer(text: str, answer_format: str) -> str:
    if answer_format == "mjbench":
        return parse_mjbench_answer(text)
    return parse_json_answer(text)


def _side(value) -> str:
    if not isinstance(value, str):
        return INVALID
    return _VALUES.get(value.strip().strip(".").lower(), INVALID)


def _find_key(obj, key):
    """The key's value in a parsed JSON object, looking into nested objects too."""
    if isinstance(obj, dict):
        if key in obj:
            return obj[key]
        for value in obj.values():
            found = _find_key(value, key)
            if found is not None:
                return found
    return None


def _json_objects(text: str) -> list:
    """Every top-level {...} in the text (and inside code fences) that parses, in order."""
    sources = [*_FENCE.findall(text), text] if "```" in text else [text]
    found = []
    for source in sources:
        for snippet in _balanced_objects(source):
            parsed = _loads_repaired(snippet)
            if parsed is not None:
                found.append(parsed)
    return found


def _balanced_objects(text: str) -> list[str]:
    objects, depth, start, in_string, escaped, quote = [], 0, 0, False, False, ""
    for index, char in enumerate(text):
        if in_string:
            if escaped:
                escaped = False
            elif char == "\\":
                escaped = True
            elif char == quote:
                in_string = False
        elif char in "\"'" and depth:
            in_string, quote = True, char
        elif char == "{":
            if depth == 0:
                start = index
            depth += 1
        elif char == "}" and depth:
            depth -= 1
            if depth == 0:
                objects.append(text[start : index + 1])
    if depth:  # an object cut off at the end (max_tokens): try to close it
        objects.append(text[start:] + "}" * depth)
    return objects


_TRAILING_COMMA = re.compile(r",\s*([}\]])")
_UNQUOTED_KEY = re.compile(r"([{,]\s*)([A-Za-z_][A-Za-z0-9_]*)\s*:")


def _loads_repaired(snippet: str):
    if json_too_deep(snippet) is not None:
        return None  # no answer nests that deep; parsing it would only exhaust the stack
    attempts = [snippet]
    repaired = _TRAILING_COMMA.sub(r"\1", snippet)
    repaired = _UNQUOTED_KEY.sub(r'\1"\2":', repaired)
    attempts.append(repaired)
    if '"' not in snippet:
        attempts.append(repaired.replace("'", '"'))
    for attempt in attempts:
        try:
            return json.loads(attempt)
        except (json.JSONDecodeError, RecursionError):
            continue
    return None
