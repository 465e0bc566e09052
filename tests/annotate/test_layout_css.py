"""The stylesheet is written with logical properties: a right-to-left translation
mirrors the layout, so no rule places anything by a physical left or right, except what must
stay screen geometry and says so (see test_layout_browser.py for the page in RTL)."""

import re
from pathlib import Path

CSS = (Path(__file__).resolve().parents[2] / "static" / "arbiter.css").read_text()
PHYSICAL = re.compile(
    r"(?<![\w-])(?:(?:margin|padding|border)-(?:left|right)[\w-]*"
    r"|left|right|(?:text-align|float|clear)\s*:\s*(?:left|right))\s*:?"
)
# Centred by `left: 50%` and `translateX(-50%)`: the same in either direction.
CENTRED = re.compile(r"left:\s*50%;[^}]*translateX\(-50%\)")


def physical_declarations(css: str) -> list[str]:
    without_comments = re.sub(r"/\*.*?\*/", "", css, flags=re.S)
    found = []
    for rule in re.findall(r"[^{}]+\{[^{}]*\}", without_comments):
        if CENTRED.search(rule):
            rule = CENTRED.sub("", rule)
        found += [match.group(0) for match in PHYSICAL.finditer(rule.split("{", 1)[1])]
    return found


def test_the_stylesheet_places_nothing_by_a_physical_left_or_right():
    assert physical_declarations(CSS) == []


def test_the_check_finds_physical_sides_and_lets_logical_ones_and_centring_pass():
    assert physical_declarations(
        ".a { margin-left: 1rem; text-align: right; }\n.b { border-right-color: red; left: 0; }"
    ) == ["margin-left:", "text-align: right", "border-right-color:", "left:"]
    assert (
        physical_declarations(
            ".a { margin-inline-start: 1rem; text-align: end; inset-inline-end: 0; }\n"
            ".t { position: fixed; left: 50%; transform: translateX(-50%); }\n"
            "/* left: 0 in a comment */ .c { float: inline-start; }"
        )
        == []
    )
