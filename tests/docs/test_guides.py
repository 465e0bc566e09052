"""The guides as their readers get them at /help/: in Chinese for a Chinese reader, every link
leading somewhere that exists, and the experts' and leads' guides written for experts and leads,
not for the developers (whose facts live in docs/internals.md)."""

import re
from html.parser import HTMLParser
from pathlib import Path
from urllib.parse import unquote, urlsplit

import pytest
from django.urls import reverse

from config import help_pages
from projects.models import Project
from tests.factories import member

pytestmark = pytest.mark.django_db

DOCS = Path(__file__).resolve().parents[2] / "docs"
LANGUAGES = ["en", "zh-hans"]
# What a developer's page says and a reader of the guide has no use for: the app's internal
# addresses, source files, the design documents and their sections, the request machinery.
DEVELOPER_MARKERS = [
    "`/annotate/<",
    "/annotate/",
    "/projects/<",
    ".py",
    ".js",
    "architecture.md",
    "internals.md",
    "§",
    "tests/",
    "static/",
    "locale/",
    "htmx",
    "SELECT ",
    "localStorage",
]
CHINESE_TITLES = {"experts": "专家指南", "leads": "负责人指南", "judges": "AI 评审模型"}


class _Article(HTMLParser):
    """The links and heading ids of a served guide's article."""

    def __init__(self) -> None:
        super().__init__()
        self.inside = False
        self.hrefs: list[str] = []
        self.ids: set[str] = set()

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "article" and "help-page" in (values.get("class") or ""):
            self.inside = True
        if not self.inside:
            return
        if tag == "a" and values.get("href"):
            self.hrefs.append(values["href"])
        if values.get("id"):
            self.ids.add(values["id"])

    def handle_endtag(self, tag):
        if tag == "article":
            self.inside = False


def _article(client, url: str) -> _Article:
    answer = client.get(url)
    assert answer.status_code == 200, url
    parsed = _Article()
    parsed.feed(answer.content.decode())
    return parsed


@pytest.fixture
def lead(client):
    user = member("boss", Project.objects.create(slug="p", name="P"), role="lead")
    client.force_login(user)
    return user


@pytest.mark.parametrize("name", list(help_pages.PAGES))
def test_a_chinese_reader_gets_the_chinese_guide(client, lead, name):
    client.cookies["django_language"] = "zh-hans"
    html = client.get(reverse("help-page", args=[name])).content.decode()
    assert '<article class="help-page" lang="zh-hans">' in html
    assert f'<h1 id="help-{CHINESE_TITLES[name].lower().replace(" ", "-")}">' in html
    # the help index and the side list name the guides in Chinese too
    index = client.get(reverse("help")).content.decode()
    assert CHINESE_TITLES[name] in index


@pytest.mark.parametrize("name", list(help_pages.PAGES))
def test_an_english_reader_keeps_the_english_guide(client, lead, name):
    client.cookies["django_language"] = "en"
    html = client.get(reverse("help-page", args=[name])).content.decode()
    assert '<article class="help-page" lang="en">' in html
    assert CHINESE_TITLES[name] not in html


@pytest.mark.parametrize("language", LANGUAGES)
@pytest.mark.parametrize("name", list(help_pages.PAGES))
def test_every_link_of_a_guide_leads_somewhere_in_help(client, lead, name, language):
    client.cookies["django_language"] = language
    article = _article(client, reverse("help-page", args=[name]))
    for href in article.hrefs:
        target = urlsplit(href)
        if target.scheme in ("http", "https"):
            continue
        assert not target.scheme and not target.netloc, href
        anchor = unquote(target.fragment)
        if not target.path:  # an anchor of the same page
            assert anchor in article.ids, href
            continue
        assert target.path.startswith("/help/"), href
        other = _article(client, target.path)
        if anchor:
            assert anchor in other.ids, href


@pytest.mark.parametrize("page", ["guide/experts.md", "guide/leads.md"])
@pytest.mark.parametrize("folder", ["", "zh/"])
def test_the_experts_and_leads_guides_are_written_for_their_readers(folder, page):
    text = (DOCS / folder / page).read_text(encoding="utf-8")
    found = [marker for marker in DEVELOPER_MARKERS if marker in text]
    assert found == [], f"{folder}{page}: move these to docs/internals.md"
    # no address of the app's own pages either (/projects/…, /notifications/…)
    assert not re.search(r"`/[a-z]", text), f"{folder}{page}: an internal address"


def test_the_marker_check_sees_a_developers_sentence():
    sentence = "The annotate page (`/annotate/<assignment id>/`, static/fit_images.js)."
    assert [m for m in DEVELOPER_MARKERS if m in sentence]


@pytest.mark.parametrize("page", list(help_pages.PAGES.values()))
def test_every_guide_has_its_chinese_translation(page):
    english = DOCS / page
    chinese = DOCS / "zh" / page
    assert chinese.is_file(), chinese
    # a translation keeps the guide's tables (keys, notifications) and code blocks
    for mark in ("| --- |", "|---|", "```"):
        assert english.read_text().count(mark) == chinese.read_text().count(mark), (page, mark)
