"""Server-side SVG charts: no JavaScript, no CDN, readable without colour. Every text that
goes into a chart is escaped. Bars are `chart-bar`, never `bar`: `.bar` is the HTML progress
bar (8 px high), and its rule would flatten every SVG rectangle into a dash.

A chart is drawn when the page renders it (`Chart`), not when its figures are computed: the
dashboards' figures are precomputed and stored (dashboards/snapshots.py), and a chart's title
and labels (lazy translations) must read in the language of the page that shows them."""

from collections.abc import Callable, Sequence
from typing import Any

from django.utils.html import escape, format_html
from django.utils.safestring import SafeString, mark_safe
from django.utils.translation import gettext as _

_ROW = 22
_BAR_WIDTH = 360
_MIN_LABEL_WIDTH = 80
_VALUE_WIDTH = 130


def _text_width(text: str) -> int:
    """A generous width of `text` in the charts' 12 px font (dashboards.css): the label column
    is sized from it, so that no label runs past the chart's left edge. Wide (CJK) characters
    take a full em."""
    return sum(12 if ord(char) >= 0x2E80 else 7 for char in text)


def _no_figures(text: str) -> SafeString:
    """What a chart with nothing to draw shows instead: a sentence, never an empty frame."""
    return format_html('<p class="muted chart-empty">{}</p>', text)


def _scrolling(svg: str, title: str) -> SafeString:
    """The chart at its own size (one font size on every chart of a page), scrolling sideways
    on a screen narrower than it; focusable so that a keyboard can scroll it too."""
    return mark_safe(  # noqa: S308 (svg escaped by its builder, title escaped here)
        f'<div class="chart-scroll" role="region" tabindex="0" aria-label="{escape(title)}">'
        f"{svg}</div>"
    )


# (label, value | None, (low, high) | None, n) as _bar_chart draws it.
BarRow = tuple[object, float | None, tuple[float, float] | None, object]


def _bar_chart(
    rows: Sequence[BarRow],
    *,
    maximum: float = 1.0,
    title: str = "",
    percent: bool = True,
    empty: str = "",
) -> SafeString:
    """Horizontal bars. rows: (label, value | None, (low, high) | None, n); the interval is
    drawn as a whisker over the bar, n is printed after the value (nothing when n is None or
    empty: a count that is not known is not shown as one). Without any row, `empty` (or a
    general sentence) in words."""
    if not rows:  # a row without a value still says "no data" beside its label
        return _no_figures(empty or _("No figures yet."))
    labels = [str(label) for label, *_ in rows]
    label_width = max(_MIN_LABEL_WIDTH, max(_text_width(label) for label in labels) + 16)
    height = _ROW * len(rows) + 24
    width = label_width + _BAR_WIDTH + _VALUE_WIDTH
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    for index, ((_label, value, interval, n), label) in enumerate(zip(rows, labels, strict=True)):
        y = 8 + index * _ROW
        parts.append(
            f'<text x="{label_width - 8}" y="{y + 13}" text-anchor="end">{escape(label)}</text>'
        )
        if value is None:
            parts.append(
                f'<text x="{label_width + 4}" y="{y + 13}" class="muted">'
                f"{escape(_('no data'))}</text>"
            )
            continue
        length = max(0.0, min(value / maximum, 1.0)) * _BAR_WIDTH
        if length > 0:  # a zero draws no bar, only its value
            parts.append(
                f'<rect x="{label_width}" y="{y + 2}" width="{length:.1f}" height="14" '
                'class="chart-bar"/>'
            )
        if interval is not None:
            low, high = (max(0.0, min(v / maximum, 1.0)) * _BAR_WIDTH for v in interval)
            x1, x2, mid = label_width + low, label_width + high, y + 9
            parts.append(
                f'<path d="M{x1:.1f} {mid}H{x2:.1f}M{x1:.1f} {mid - 5}V{mid + 5}'
                f'M{x2:.1f} {mid - 5}V{mid + 5}" class="whisker"/>'
            )
        shown = f"{value:.1%}" if percent else f"{value:.3g}"
        count = "" if n is None or n == "" else f' <tspan class="muted">n={escape(n)}</tspan>'
        parts.append(f'<text x="{label_width + _BAR_WIDTH + 6}" y="{y + 13}">{shown}{count}</text>')
    parts.append("</svg>")
    return _scrolling("".join(parts), title)


def _histogram(
    counts: list[int], labels: list[str], *, title: str = "", empty: str = ""
) -> SafeString:
    """Vertical bars of counts, one per label; without any count, `empty` in words."""
    if not any(counts):
        return _no_figures(empty or _("No figures yet."))
    top = max(counts, default=0) or 1
    step, chart_height = 34, 90
    width, height = step * len(counts) + 10, chart_height + 40
    parts = [
        f'<svg class="chart" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
    ]
    for index, (count, label) in enumerate(zip(counts, labels, strict=True)):
        bar = chart_height * count / top
        x = 8 + index * step
        if count:  # a zero count draws no bar, only its label and its 0
            parts.append(
                f'<rect x="{x}" y="{chart_height - bar + 14:.1f}" width="{step - 8}" '
                f'height="{bar:.1f}" class="chart-bar"><title>{escape(label)}: {count}</title>'
                "</rect>"
            )
        parts.append(
            f'<text x="{x + (step - 8) / 2}" y="{chart_height + 28}" text-anchor="middle">'
            f"{escape(label)}</text>"
            f'<text x="{x + (step - 8) / 2}" y="{chart_height - bar + 11:.1f}" '
            f'text-anchor="middle" class="small">{count}</text>'
        )
    parts.append("</svg>")
    return _scrolling("".join(parts), title)


def _sparkline(values: list[float | None], *, title: str = "") -> SafeString:
    """A small line of shares (0..1) over time; gaps where a value is undefined."""
    width, height = 120, 28
    points = [(i, v) for i, v in enumerate(values) if v is not None]
    if len(points) < 2:
        return mark_safe('<span class="muted">—</span>')
    step = width / (len(values) - 1)
    path = " ".join(
        f"{'M' if n == 0 else 'L'}{i * step:.1f} {height - 2 - v * (height - 4):.1f}"
        for n, (i, v) in enumerate(points)
    )
    return mark_safe(  # noqa: S308 (numbers only, title escaped)
        f'<svg class="spark" role="img" viewBox="0 0 {width} {height}" width="{width}" '
        f'height="{height}" xmlns="http://www.w3.org/2000/svg"><title>{escape(title)}</title>'
        f'<path d="{path}" class="line"/></svg>'
    )


class Chart:
    """A chart drawn when rendered (`{{ chart }}` in a template, or str()): picklable with its
    figures, its texts translated into the language of the request that shows it."""

    def __init__(self, draw: Callable[..., SafeString], *args: Any, **kwargs: Any) -> None:
        self.draw, self.args, self.kwargs = draw, args, kwargs

    def __html__(self) -> SafeString:
        return self.draw(*self.args, **self.kwargs)

    def __str__(self) -> str:
        return str(self.__html__())


def bar_chart(rows: Sequence[BarRow], **options: Any) -> Chart:
    return Chart(_bar_chart, rows, **options)


def histogram(counts: list[int], labels: list[str], **options: Any) -> Chart:
    return Chart(_histogram, counts, labels, **options)


def sparkline(values: list[float | None], **options: Any) -> Chart:
    return Chart(_sparkline, values, **options)
