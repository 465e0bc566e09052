"""The SVG charts: a zero draws no bar, and no page-wide CSS rule reshapes the chart's shapes."""

import re
from pathlib import Path

from django.conf import settings

from dashboards.charts import bar_chart, histogram

CSS = Path(settings.BASE_DIR) / "static" / "arbiter.css"


def _rects(svg: str) -> list[str]:
    return re.findall(r"<rect\b[^>]*>", svg)


def _classes(svg: str) -> set[str]:
    return {name for rect in _rects(svg) for name in re.findall(r'class="([^"]*)"', rect)}


def test_a_zero_count_draws_no_bar_and_the_others_fill_their_height():
    svg = str(histogram([0, 3, 0, 6], ["1", "2", "3", "4"], title="scores"))
    rects = _rects(svg)
    assert len(rects) == 2
    heights = sorted(float(re.search(r'height="([\d.]+)"', r).group(1)) for r in rects)
    assert heights == [45.0, 90.0]  # proportional to 3 and 6, the tallest the full height
    for label in ["1", "2", "3", "4"]:  # every label and its count still printed
        assert f'text-anchor="middle">{label}</text>' in svg
    assert svg.count('class="small">0</text>') == 2


def test_a_zero_value_draws_no_bar_but_keeps_its_figure():
    svg = str(bar_chart([("a", 0.0, None, 4), ("b", 0.5, (0.25, 0.75), 4)], title="t"))
    rects = _rects(svg)
    assert len(rects) == 1 and 'width="180.0"' in rects[0]
    assert "0.0% <tspan" in svg and "50.0% <tspan" in svg


def _rules(css: str):
    for selectors, body in re.findall(r"([^{}]+)\{([^}]*)\}", re.sub(r"/\*.*?\*/", "", css)):
        for selector in selectors.split(","):
            yield selector.strip(), body


def test_chart_shapes_are_styled_only_by_rules_scoped_to_charts():
    """The progress bar's `.bar { height: 8px }` once turned every histogram bar into a dash."""
    svg = str(histogram([1, 2], ["a", "b"])) + str(bar_chart([("a", 0.4, None, 3)]))
    classes = _classes(svg)
    assert classes
    css = CSS.read_text()
    for name in classes:
        matching = [s for s, _ in _rules(css) if re.search(rf"\.{re.escape(name)}\b(?!-)", s)]
        assert matching, name  # the bars are coloured by some rule
        for selector in matching:
            assert selector.startswith("svg.chart "), (name, selector)


def test_an_unknown_count_prints_no_n():
    svg = str(bar_chart([("experts", 0.9, None, None), ("week", 72, None, "")], maximum=100))
    assert "n=" not in svg and "n=—" not in svg


def test_the_label_column_is_as_wide_as_the_longest_label():
    long = "experts, each against the others"
    svg = str(bar_chart([(long, 0.9, None, 12), ("coin", 0.5, None, 8)]))
    label_end = float(re.search(r'<text x="([\d.]+)"[^>]*text-anchor="end">experts', svg).group(1))
    assert label_end >= 7 * len(long)  # right-aligned there: it starts inside the chart


def test_a_chart_without_figures_says_so_in_words():
    assert "No figures yet." in str(bar_chart([], title="t"))
    assert "no data" in str(bar_chart([("coin", None, None, 0)]))  # its row says why
    assert "No figures yet." in str(histogram([0, 0, 0], ["1", "2", "3"]))
    said = str(bar_chart([], empty="No judge has a figure here yet."))
    assert "No judge has a figure here yet." in said
