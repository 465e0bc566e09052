"""The expert's own page in Chromium (tests marked `browser`): axe-core finds no violation of
any impact at 1366×768 and on a phone, with its tables, gold answers and links populated, and
the page has one h1 and headings for its sections."""

import pytest
from django.urls import reverse

from tests.axe import violations
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_experts_own_page_has_no_violation(
    expert_work, live_server, chromium_browser, viewport
):
    page = log_in(chromium_browser, live_server.url, expert_work.expert, viewport=viewport)
    page.get_by_role("link", name=f"Your work in {expert_work.project.name}").click()
    settled(page)
    assert page.url == live_server.url + reverse("own-work", args=[expert_work.project.slug])
    open_settled(page, page.url)
    assert violations(page) == []
    assert page.locator("h1").count() == 1
    assert page.get_by_role("heading", level=2).all_inner_texts() == [
        "Pairs rated and active time",
        "Gold checks you answered",
    ]
    assert page.get_by_role("table", name="Gold checks you answered, newest first").count() == 1
    assert page.console_errors == []
