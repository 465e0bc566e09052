"""Every page of the expert and of the lead in Simplified Chinese: with the browser
asking for zh-Hans, each page says it is Chinese (`<html lang>`) and shows no English word of
the interface (tests/i18n/english.py: the data's own words and a few names excepted)."""

import pytest
from django.urls import reverse

from projects.models import Task
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.i18n.english import data_words, english_left
from tests.pages.browsing import lead_pages
from tests.pages.conftest import annotator, lead_site  # noqa: F401  (fixtures)

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}


def _english_on(client, path: str) -> list[str]:
    response = client.get(path, follow=True, **CHINESE)
    assert response.status_code == 200, path
    html = response.content.decode()
    assert '<html lang="zh-hans"' in html, path
    return english_left(html, data_words())


@pytest.mark.django_db
def test_a_leads_pages_in_chinese_have_no_english_left(client, lead_site):  # noqa: F811
    project, lead = lead_site
    client.force_login(lead)
    left = {name: _english_on(client, path) for name, path in lead_pages(project)}
    assert {name: words for name, words in left.items() if words} == {}


@pytest.mark.django_db
def test_an_experts_pages_in_chinese_have_no_english_left(client, annotator):  # noqa: F811
    client.force_login(annotator)
    task = Task.objects.get(project__slug="second", slug="t2i")
    pages = {
        "home": reverse("home"),
        "annotate": reverse("task-next", args=[task.project.slug, task.slug]),
        "own-work": reverse("own-work", args=[task.project.slug]),
        "notifications": reverse("notifications"),
        "password_change": reverse("password_change"),
        "api-tokens": reverse("api-tokens"),
    }
    left = {name: _english_on(client, path) for name, path in pages.items()}
    assert {name: words for name, words in left.items() if words} == {}


@pytest.mark.django_db
def test_the_sign_in_page_in_chinese_has_no_english_left(client):
    assert _english_on(client, reverse("login")) == []
