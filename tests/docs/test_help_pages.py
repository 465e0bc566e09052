"""The guides for experts and leads inside Arbiter (/help/, config/help_pages.py): rendered from
docs/guide/ for anyone signed in, in Chinese where a translation exists, and nothing else of the
repository reachable; the Markdown goes through the same kind of sanitising as the guidelines."""

import re

import pytest
from django.urls import reverse

from config import help_pages
from projects.models import Project
from tests.deploy.test_image_build import REPO_ROOT, is_ignored, parse_dockerignore
from tests.factories import member

pytestmark = pytest.mark.django_db


@pytest.fixture
def people():
    project = Project.objects.create(slug="p", name="P")
    return member("ann", project), member("boss", project, role="lead")


@pytest.fixture
def docs(tmp_path, monkeypatch):
    """A docs/ folder of the test's own, so its content can be anything."""
    (tmp_path / "guide").mkdir()
    for name, file in help_pages.PAGES.items():
        (tmp_path / file).write_text(f"# Guide {name}\n\nBody of {name}.\n")
    (tmp_path / "operators.md").write_text("# Operators\n\nSECRET_KEY and more.\n")
    monkeypatch.setattr(help_pages, "DOCS_DIR", tmp_path)
    return tmp_path


def test_the_experts_guide_renders_for_an_annotator(client, people):
    client.force_login(people[0])
    page = client.get(reverse("help-page", args=["experts"]))
    assert page.status_code == 200
    html = page.content.decode()
    assert "Guide for experts" in html and 'id="help-annotating"' in html
    assert "<kbd>" not in html and "<table>" in html  # the keys' table


def test_the_leads_guide_renders_for_a_lead_with_its_links_inside_the_app(client, people):
    client.force_login(people[1])
    html = client.get(reverse("help-page", args=["leads"])).content.decode()
    assert "Guide for leads" in html
    # an anchor of the same page, and a link to the experts' guide, stay links
    assert 'href="#help-judges-against-the-experts"' in html
    # a link to a page that is not served keeps its text: no link to docs/ or a source file
    article = html.split('class="help-page"')[1]
    assert not re.search(r'href="[^"]*\.md', article) and 'href="../' not in article


def test_the_help_index_lists_the_guides(client, people):
    client.force_login(people[0])
    html = client.get(reverse("help")).content.decode()
    for name in help_pages.PAGES:
        assert reverse("help-page", args=[name]) in html


@pytest.mark.parametrize(
    "name", ["operators", "architecture", "guide", "README", "environment", "..", "x" * 300]
)
def test_a_page_outside_the_list_answers_404(client, people, name):
    client.force_login(people[0])
    assert client.get(f"/help/{name}/").status_code == 404


@pytest.mark.parametrize(
    "path",
    [
        "/help/../operators/",
        "/help/..%2Foperators/",
        "/help/%2e%2e%2f%2e%2e%2fREADME/",
        "/help/guide%2Fexperts/",
        "/help/experts.md/",
        "/help/experts/../../SECURITY.md",
    ],
)
def test_a_traversal_attempt_reaches_nothing(client, people, path, docs):
    client.force_login(people[0])
    answer = client.get(path, follow=True)
    assert "SECRET_KEY" not in answer.content.decode()
    assert answer.status_code == 404


def test_anonymous_visitors_are_sent_to_sign_in(client):
    for url in (reverse("help"), reverse("help-page", args=["experts"])):
        answer = client.get(url)
        assert answer.status_code == 302 and answer["Location"].startswith(reverse("login"))


def test_every_page_header_links_to_help(client, people):
    annotator, lead = people
    for user, url in ((annotator, reverse("home")), (lead, reverse("notifications"))):
        client.force_login(user)
        html = client.get(url).content.decode()
        assert f'href="{reverse("help")}"' in html, url


def test_markdown_cannot_inject_markup(client, people, docs):
    (docs / "guide" / "experts.md").write_text(
        "# Experts\n\n<script>alert(1)</script>\n\n"
        '[x](javascript:alert(1)) <img src=x onerror="alert(1)"> ![i](http://example.org/i.png)\n\n'
        "[ops](../operators.md) [leads](leads.md#a-b) [web](https://example.org/)\n"
    )
    client.force_login(people[0])
    html = client.get(reverse("help-page", args=["experts"])).content.decode()
    article = html.split('class="help-page"')[1].split("</article>")[0]
    assert (
        "<script>" not in article
        and "onerror=" not in article.replace("&quot;", '"').split("&lt;img")[0]
    )
    assert "&lt;script&gt;" in article  # shown as text, never run
    assert 'href="javascript:' not in article and "<img" not in article
    assert "ops" in article and "operators" not in article  # the text without its link
    assert f'href="{reverse("help-page", args=["leads"])}#help-a-b"' in article
    assert 'href="https://example.org/" rel="noopener noreferrer nofollow"' in article


def test_chinese_readers_get_the_translation_where_there_is_one(client, people, docs):
    (docs / "zh" / "guide").mkdir(parents=True)
    (docs / "zh" / "guide" / "experts.md").write_text("# 专家指南\n\n正文。\n")
    client.force_login(people[0])
    client.cookies["django_language"] = "zh-hans"
    experts = client.get(reverse("help-page", args=["experts"])).content.decode()
    assert "专家指南" in experts and 'lang="zh-hans"' in experts
    leads = client.get(reverse("help-page", args=["leads"])).content.decode()
    assert "Body of leads." in leads and '<article class="help-page" lang="en">' in leads
    client.cookies["django_language"] = "en"
    assert "Body of experts." in client.get(reverse("help-page", args=["experts"])).content.decode()


def test_the_served_guides_are_in_the_production_image():
    """The image leaves docs/ out, but for the guides /help/ reads."""
    rules = parse_dockerignore((REPO_ROOT / ".dockerignore").read_text())
    for file in help_pages.PAGES.values():
        assert not is_ignored(f"docs/{file}", rules), file
        assert not is_ignored(f"docs/zh/{file}", rules), file
    assert is_ignored("docs/architecture.md", rules)


@pytest.mark.parametrize("name", list(help_pages.PAGES))
def test_a_served_guide_sends_nobody_to_a_file(client, people, name):
    """Read in the browser, a guide names no file the browser cannot open."""
    client.force_login(people[1])
    html = client.get(reverse("help-page", args=[name])).content.decode()
    article = html.split('class="help-page"')[1].split("</article>")[0]
    assert "README" not in article and not re.search(r"(?<!api/)docs/", article)
    assert not re.search(r'href="(?!https?:|#|/help/)', article)
