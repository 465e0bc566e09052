"""Which language a page speaks: the browser's (Accept-Language) unless the person
chose another with the header's switch, which is remembered; dates and numbers follow it."""

import pytest
from django.conf import settings
from django.urls import reverse

from tests.i18n.english import visible_texts


def _lang(response) -> str:
    html = response.content.decode()
    return html.split('<html lang="', 1)[1].split('"', 1)[0]


@pytest.mark.django_db
def test_the_page_follows_the_browsers_language_and_says_so(client):
    assert _lang(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="zh-CN,zh;q=0.9")) == "zh-hans"
    assert _lang(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en-GB")) == "en"
    # A language Arbiter does not have falls back to English.
    assert _lang(client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="ja")) == "en"


@pytest.mark.django_db
def test_the_header_switch_overrides_the_browser_and_is_remembered(client):
    page = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en")
    assert "语言" not in " ".join(visible_texts(page.content.decode()))
    # The form sends no `next`: the switch returns to the page it was on (the Referer).
    answer = client.post(
        reverse("set_language"),
        {"language": "zh-hans"},
        HTTP_REFERER="http://testserver" + reverse("login"),
    )
    assert answer.status_code == 302
    assert answer["Location"] in {reverse("login"), "http://testserver" + reverse("login")}
    assert client.cookies[settings.LANGUAGE_COOKIE_NAME].value == "zh-hans"
    again = client.get(reverse("login"), HTTP_ACCEPT_LANGUAGE="en")
    assert _lang(again) == "zh-hans"
    assert "语言" in visible_texts(again.content.decode())


@pytest.mark.django_db
def test_the_switch_never_sends_anyone_to_another_site(client):
    answer = client.post(
        reverse("set_language"),
        {"language": "zh-hans", "next": "https://evil.example/"},
        HTTP_REFERER="https://evil.example/",
    )
    assert answer.status_code == 302
    assert "evil.example" not in answer["Location"]


@pytest.mark.django_db
def test_every_page_offers_the_switch_with_each_language_named_in_itself(client):
    html = client.get(reverse("login")).content.decode()
    assert 'name="language"' in html
    switch = html[html.index('class="language-switch"') :]
    switch = switch[: switch.index("</form>")]
    assert 'name="next"' not in switch  # a page never repeats its address (see base.html)
    assert '<option value="zh-hans" lang="zh-hans">简体中文</option>' in html
    assert '<option value="en" lang="en" selected>English</option>' in html
