"""Phones: at 390×844 the home page is a list of task cards whose Start/Continue buttons are
on screen, and no page of a lead's project is wider than the screen (wide tables scroll inside
their own box, which the keyboard can reach); at 360 px the top bar still fits, in two lines."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from projects.models import Membership
from tests.annotate.real_content import HEADER_LINES
from tests.axe import serious_violations
from tests.pages.browsing import PHONE, lead_pages, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


def test_the_home_page_is_a_list_of_task_cards_on_a_phone(annotator, live_server, chromium_browser):
    page = log_in(chromium_browser, live_server.url, annotator, viewport=PHONE)
    settled(page)
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= inner_width
    buttons = page.get_by_role("button", name="Start").all()
    buttons += page.get_by_role("button", name="Continue").all()
    assert len(buttons) == 2
    for button in buttons:
        box = button.bounding_box()
        assert box["x"] >= 0 and box["x"] + box["width"] <= inner_width, box
    # One card per task: the name on its own line above the counts, bar and button.
    rows = page.locator("table.queue tbody tr")
    assert rows.count() == 3
    for index in range(rows.count()):
        row = rows.nth(index)
        name, bar = row.locator("td.task").bounding_box(), row.locator(".bar").bounding_box()
        assert name["y"] + name["height"] <= bar["y"], index
        assert bar["width"] > inner_width / 2, index
    # The column names that the hidden header row gave now label the counts.
    labels = rows.first.locator("td.num").evaluate_all(
        "cells => cells.map(c => getComputedStyle(c, '::before').content)"
    )
    assert labels == ['"Rated "', '"Remaining "']
    assert page.locator("table.queue thead").first.bounding_box()["height"] <= 1
    assert serious_violations(page) == []
    assert page.console_errors == []


def test_no_page_of_a_lead_is_wider_than_a_phone(lead_site, live_server, chromium_browser):
    # `lead_site` first: its judge runs use asyncio, which cannot start inside Playwright's loop.
    project, lead = lead_site
    page = log_in(chromium_browser, live_server.url, lead, viewport=PHONE)
    too_wide, found = {}, {}
    for name, path in lead_pages(project):
        open_settled(page, live_server.url + path)
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
        if scroll_width > inner_width + 1:
            too_wide[name] = (scroll_width, _widest(page, inner_width))
        lines = serious_violations(page)  # e.g. a box that scrolls but cannot take the focus
        if lines:
            found[name] = lines
    assert too_wide == {}, too_wide
    assert found == {}, found
    assert page.console_errors == []


def test_the_top_bar_fits_360_pixels(rated, live_server, chromium_browser):
    project, _ = rated
    user = User.objects.create_user("annotator-with-a-rather-long-username")
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    page = log_in(chromium_browser, live_server.url, user, viewport={"width": 360, "height": 740})
    for path in [reverse("home"), reverse("password_change")]:
        page.goto(live_server.url + path)
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= inner_width, path
        shown = "header.topbar :is(a, button, select, summary):visible, .topbar .username:visible"
        for item in page.locator(shown).all():
            box = item.bounding_box()
            assert box["x"] >= 0 and box["x"] + box["width"] <= inner_width, item.inner_text()
        assert page.evaluate(HEADER_LINES) <= 2, path
    assert page.console_errors == []


def _widest(page, width: int) -> list[str]:
    """The elements that reach past `width`, to say what to fix."""
    return page.evaluate(
        """width => Array.from(document.querySelectorAll("main *"))
            .filter(e => e.getBoundingClientRect().right > width + 1)
            .filter(e => !e.closest(".table-scroll"))
            .slice(0, 5)
            .map(e => e.tagName.toLowerCase() + (e.className ? "." + e.className : ""))""",
        width,
    )
