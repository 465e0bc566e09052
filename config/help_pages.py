"""The guides for experts and leads, served inside Arbiter at /help/ from the Markdown files of
the documentation (docs/guide/), so that the pages people use and the guides they read are one
text.

Only the pages of `PAGES` are served: a name is a key of that map, never a path, so nothing
else under docs/ (nor outside it) can be reached. The Markdown is the repository's own, but it
is rendered as untrusted text all the same (as content/rendering.py does for guidelines):
markdown-it escapes raw HTML and nh3 keeps only the tags below. Links to another served guide
become its /help/ address; other relative links (operators' pages, source files) keep their
text only; images are dropped. In Chinese, docs/zh/guide/<page>.md is served when it exists.
"""

import posixpath
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

import nh3
from django.conf import settings
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.urls import reverse
from django.utils import translation
from django.utils.safestring import SafeString, mark_safe
from markdown_it import MarkdownIt
from markdown_it.token import Token

# page name → its file under docs/ (the order is the help index's)
PAGES = {
    "experts": "guide/experts.md",
    "leads": "guide/leads.md",
    "judges": "guide/judges.md",
}
DOCS_DIR = Path(settings.BASE_DIR) / "docs"
ID_PREFIX = "help-"  # a heading's id never collides with the page's own (#content)

_MD = MarkdownIt("commonmark", {"html": False}).enable("table")
_TAGS = {
    "p", "br", "strong", "em", "code", "pre", "blockquote", "ul", "ol", "li", "hr",
    "h1", "h2", "h3", "h4", "h5", "h6", "a", "table", "thead", "tbody", "tr", "th", "td",
}  # fmt: skip
_HEADINGS = {"h1", "h2", "h3", "h4", "h5", "h6"}
_ATTRIBUTES = {
    "a": {"href", "title"},
    "th": {"style"},
    "td": {"style"},
    **{tag: {"id"} for tag in _HEADINGS},
}


@dataclass(frozen=True)
class HelpPage:
    name: str
    title: str
    html: SafeString
    language: str  # of the text served: "en" or "zh-hans"


def _slug(text: str) -> str:
    """The anchor MkDocs and GitHub give a heading, so the docs' #links work here too."""
    text = re.sub(r"[^\w\- ]", "", text.strip().lower())
    return text.replace(" ", "-")


def _href(target: str, page_file: str) -> str | None:
    """Where a link of the page goes in the app, or None to keep its text only."""
    if target.startswith("#"):
        return "#" + ID_PREFIX + target[1:]
    if re.match(r"(https?|mailto):", target):
        return target
    path, _, fragment = target.partition("#")
    resolved = posixpath.normpath(posixpath.join(posixpath.dirname(page_file), path))
    for name, file in PAGES.items():
        if resolved == file:
            anchor = f"#{ID_PREFIX}{fragment}" if fragment else ""
            return reverse("help-page", args=[name]) + anchor
    return None


def _rewrite(tokens: list[Token], page_file: str) -> None:
    for index, token in enumerate(tokens):
        if token.type == "heading_open":
            inline = tokens[index + 1]
            token.attrSet("id", ID_PREFIX + _slug(inline.content.replace("`", "")))
        if token.children:
            kept: list[Token] = []
            dropped = 0  # nesting of links whose tags are dropped
            for child in token.children:
                if child.type == "image":
                    continue
                if child.type == "link_open":
                    href = _href(str(child.attrGet("href") or ""), page_file)
                    if href is None:
                        dropped += 1
                        continue
                    child.attrSet("href", href)
                if child.type == "link_close" and dropped:
                    dropped -= 1
                    continue
                kept.append(child)
            token.children = kept


def render_markdown(text: str, page_file: str) -> SafeString:
    tokens = _MD.parse(text)
    _rewrite(tokens, page_file)
    html = _MD.renderer.render(tokens, _MD.options, {})
    cleaned = nh3.clean(
        html,
        tags=_TAGS,
        attributes=_ATTRIBUTES,
        url_schemes={"http", "https", "mailto"},
        link_rel="noopener noreferrer nofollow",
    )
    return mark_safe(cleaned)  # noqa: S308 (sanitised)


@lru_cache(maxsize=16)
def _rendered(path: str, modified: int, page_file: str) -> tuple[str, SafeString]:
    text = Path(path).read_text(encoding="utf-8")
    first = text.lstrip().splitlines()[0] if text.strip() else ""
    title = first.removeprefix("# ").strip() if first.startswith("# ") else ""
    return title, render_markdown(text, page_file)


def help_page(name: str, language: str) -> HelpPage:
    """The page in the language asked for when it is translated, else in English."""
    file = PAGES[name]
    candidates = [(DOCS_DIR / "zh" / file, "zh-hans")] if language.startswith("zh") else []
    for path, served in [*candidates, (DOCS_DIR / file, "en")]:
        if path.is_file():
            title, html = _rendered(str(path), path.stat().st_mtime_ns, file)
            return HelpPage(name=name, title=title or name, html=html, language=served)
    raise Http404("No such help page")


@login_required
def help_index(request: HttpRequest) -> HttpResponse:
    language = translation.get_language() or "en"
    pages = [help_page(name, language) for name in PAGES]
    return render(request, "help/index.html", {"pages": pages})


@login_required
def help_view(request: HttpRequest, page: str) -> HttpResponse:
    if page not in PAGES:
        raise Http404("No such help page")
    language = translation.get_language() or "en"
    pages = [help_page(name, language) for name in PAGES]
    current = next(p for p in pages if p.name == page)
    return render(request, "help/page.html", {"page": current, "pages": pages})
