"""The sign-in page with the provider's button, the refusal page and the passwords-off
answer: in Simplified Chinese with no English left, and without accessibility violations at
1366 and 390 px."""

import pytest
from django.urls import reverse

from tests.axe import violations
from tests.i18n.english import data_words, english_left
from tests.pages.browsing import DESKTOP, PHONE, open_settled

CHINESE = {"HTTP_ACCEPT_LANGUAGE": "zh-Hans,zh;q=0.9,en;q=0.5"}
NAME = {"lab", "id"}  # the provider's name, "Lab ID": the operator's word, not the interface's


@pytest.fixture
def provider_set(settings):
    """A provider as the operator configures it (nothing is fetched by these pages)."""
    settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
    settings.ARBITER_OIDC_NAME = "Lab ID"
    settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
    settings.ARBITER_OIDC_CLIENT_SECRET = "secret"
    settings.ARBITER_OIDC_AUTHORIZATION_ENDPOINT = "https://id.lab.example/authorize"
    settings.ARBITER_OIDC_TOKEN_ENDPOINT = "https://id.lab.example/token"
    settings.ARBITER_OIDC_JWKS_ENDPOINT = "https://id.lab.example/jwks"


def _chinese(answer) -> list[str]:
    html = answer.content.decode()
    assert '<html lang="zh-hans"' in html
    return english_left(html, data_words() | NAME)


@pytest.mark.django_db
def test_the_sign_in_and_refusal_pages_in_chinese_have_no_english_left(
    client, settings, provider_set
):
    page = client.get(reverse("login"), **CHINESE)
    assert "通过 Lab ID 登录" in page.content.decode()
    assert _chinese(page) == []
    refused = client.get("/oidc/callback/?code=c&state=s", **CHINESE)
    assert refused.status_code == 400
    assert _chinese(refused) == []
    settings.ARBITER_PASSWORD_SIGN_IN = False
    off = client.post(reverse("login"), {"username": "a", "password": "b"}, **CHINESE)
    assert off.status_code == 403
    assert "此服务器已关闭密码登录。" in off.content.decode()
    assert _chinese(off) == []


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_sign_in_and_refusal_pages_have_no_violation_and_fit(
    provider_set, live_server, browser_page, viewport
):
    page = browser_page
    page.set_viewport_size(viewport)
    for path in (reverse("login"), "/oidc/callback/?code=c&state=s"):
        open_settled(page, live_server.url + path)
        assert violations(page) == [], (path, violations(page))
        assert page.locator("h1").count() == 1
        width = page.evaluate("document.documentElement.scrollWidth")
        assert width <= viewport["width"], (path, width)
    assert [e for e in page.console_errors if "status of 400" not in e] == []
