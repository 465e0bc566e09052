"""The bell in Chromium: a lead starts an export from the overview and the bell counts it
once it is ready; the list names it, links to it and marks it read; axe finds nothing on the
list and the settings pages at 1366 px nor at 390 px, where they fit the screen."""

import re
import time

import pytest
from django.urls import reverse

from tests.axe import violations
from tests.pages.browsing import PHONE, WAIT_MS, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def bell(page) -> str:
    return page.locator("header a.bell").get_attribute("aria-label") or ""


def wait_for_bell(page, name: str) -> None:
    """Reload until the bell reads `name` (the export runs in the background)."""
    deadline = time.monotonic() + WAIT_MS / 1000
    while bell(page) != name:
        assert time.monotonic() < deadline, f"the bell still reads {bell(page)!r}"
        page.reload()
        settled(page)


def fits(page) -> bool:
    return page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")


def test_the_bell_counts_a_finished_export(site, exportable, live_server, chromium_browser):
    page = log_in(chromium_browser, live_server.url, site.lead)
    assert bell(page) == "Notifications, 0 unread"
    open_settled(page, live_server.url + reverse("dash-overview", args=[site.project.slug]))
    page.get_by_role("button", name="Start export").first.click()
    settled(page)
    wait_for_bell(page, "Notifications, 1 unread")

    page.get_by_role("link", name="Notifications, 1 unread").click()
    page.wait_for_url(live_server.url + reverse("notifications"))
    ready = page.get_by_role("link", name=re.compile(r"Export #\d+ \(1 pair\) is ready"))
    assert ready.get_attribute("href") == reverse("dash-exports", args=[site.project.slug])
    assert violations(page) == []
    page.set_viewport_size(PHONE)
    assert violations(page) == [] and fits(page)

    page.get_by_role("button", name=re.compile("^Mark read")).click()
    settled(page)
    assert bell(page) == "Notifications, 0 unread"
    assert page.get_by_text("New", exact=True).count() == 0
    assert page.console_errors == []


def test_the_settings_page_has_no_violation(site, live_server, chromium_browser):
    page = log_in(chromium_browser, live_server.url, site.lead)
    open_settled(page, live_server.url + reverse("notification-settings"))
    assert violations(page) == []
    page.set_viewport_size(PHONE)
    assert violations(page) == [] and fits(page)
    page.get_by_role("checkbox", name="A pair flagged by an annotator by e-mail").check()
    page.get_by_role("button", name="Save").click()
    settled(page)
    assert page.get_by_role(
        "checkbox", name="A pair flagged by an annotator by e-mail"
    ).is_checked()
    assert page.console_errors == []
