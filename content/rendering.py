"""Turning untrusted text into safe HTML.

Raw HTML in the source is never interpreted: markdown-it escapes it (`html: False`) and nh3
sanitises the result as a second line of defence. Response and prompt text get basic Markdown
with line breaks kept but no links or remote images (an annotator must not be sent anywhere,
nor the page fetch anything); guidelines, written by leads, may carry links and tables.
"""

from dataclasses import dataclass

import nh3
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt

from content.models import Asset

_CONTENT_MD = MarkdownIt("commonmark", {"html": False, "breaks": True}).disable(
    ["link", "image", "autolink", "reference"]
)
_GUIDELINES_MD = MarkdownIt("commonmark", {"html": False}).enable("table")

_TEXT_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6",
}  # fmt: skip
_GUIDELINE_TAGS = _TEXT_TAGS | {"a", "table", "thead", "tbody", "tr", "th", "td"}


def content_text_html(text: str) -> SafeString:
    html = _CONTENT_MD.render(text)
    return mark_safe(nh3.clean(html, tags=_TEXT_TAGS, attributes={}))  # noqa: S308 (sanitised)


def guidelines_html(text: str) -> SafeString:
    html = _GUIDELINES_MD.render(text)
    cleaned = nh3.clean(
        html,
        tags=_GUIDELINE_TAGS,
        attributes={"a": {"href", "title"}, "th": {"style"}, "td": {"style"}},
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)  # noqa: S308 (sanitised)


@dataclass(frozen=True)
class Part:
    """One piece of a prompt or response, ready for the template."""

    kind: str  # "text", "image" or "missing-image"
    html: SafeString | None = None
    asset: Asset | None = None
    sha256: str = ""


def image_shas(*contents) -> set[str]:
    return {
        value
        for content in contents
        for kind, value in (content or [])
        if kind == "image" and isinstance(value, str)
    }


def content_parts(content, assets: dict[str, Asset]) -> list[Part]:
    """Stored part list → template parts; an image whose asset is gone shows as missing."""
    parts = []
    for kind, value in content or []:
        if kind == "text":
            parts.append(Part("text", html=content_text_html(value)))
        elif value in assets:
            parts.append(Part("image", asset=assets[value], sha256=value))
        else:
            parts.append(Part("missing-image", sha256=str(value)))
    return parts


def content_summary(content, limit: int = 80) -> str:
    """The first line of a part list's text, shortened (plain text: templates escape it), for
    lists that name a pair by its prompt."""
    for kind, value in content or []:
        if kind == "text" and isinstance(value, str) and value.strip():
            line = " ".join(value.split())
            return line if len(line) <= limit else line[: limit - 1].rstrip() + "…"
    return "(image prompt)" if content else "(no prompt shipped)"
