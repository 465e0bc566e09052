"""axe-core (tests/axe.py) finds no serious or critical problem on the pages outside the
annotate page at 1366×768: the login page, the home page of an annotator and of a lead, and
every page of a lead's project (dashboards, data, setup, members, judging), with a rated
project so tables, charts and forms are populated. Nor, on the lead's pages, any lesser one
(landmarks, headings, empty table headers). Then by keyboard: the skip link, sorting."""

import pytest
from django.urls import reverse

from tests.axe import serious_violations, violations
from tests.pages.browsing import DESKTOP, lead_pages, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def report(found: dict[str, list[str]]) -> str:
    return "\n".join(f"{name}:\n  " + "\n  ".join(lines) for name, lines in found.items())


def test_the_login_page_has_no_serious_violation(live_server, browser_page):
    page = browser_page
    page.set_viewport_size(DESKTOP)
    open_settled(page, live_server.url + reverse("login"))
    assert violations(page) == [], report({"login": violations(page)})
    assert page.locator("h1").count() == 1
    # A failed attempt shows the form's error.
    page.fill("input[name=username]", "nobody")
    page.fill("input[name=password]", "wrong-password")
    page.press("input[name=password]", "Enter")
    settled(page)
    assert serious_violations(page) == [], report({"login, failed": serious_violations(page)})
    assert page.console_errors == []


def test_every_page_of_a_lead_has_no_violation(lead_site, live_server, chromium_browser):
    # `lead_site` first: its judge runs use asyncio, which cannot start inside Playwright's loop.
    project, lead = lead_site
    page = log_in(chromium_browser, live_server.url, lead)
    found, headings = {}, {}
    for name, path in lead_pages(project):
        open_settled(page, live_server.url + path)
        lines = violations(page)  # every impact: serious and critical, and lesser ones too
        if lines:
            found[name] = lines
        h1 = page.locator("h1").count()
        if h1 != 1:
            headings[name] = h1
    assert found == {}, report(found)
    assert headings == {}, f"pages without exactly one h1: {headings}"
    assert page.console_errors == []


def test_the_home_page_of_an_annotator_has_no_violation(annotator, live_server, chromium_browser):
    page = log_in(chromium_browser, live_server.url, annotator)
    settled(page)
    assert page.get_by_role("button", name="Continue").count() == 1
    assert page.get_by_role("button", name="Start").count() == 1
    labels = page.get_by_role("progressbar").evaluate_all("bars => bars.map(b => b.ariaLabel)")
    assert "Task t2i: 8 of 8 done" in labels
    assert "Task edit: 0 of 2 done" in labels
    assert violations(page) == [], report({"home": violations(page)})
    assert page.console_errors == []


def test_the_skip_link_is_the_first_stop_and_leads_to_the_content(
    rated, live_server, chromium_browser
):
    project, lead = rated
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-overview", args=[project.slug]))
    skip = page.locator("a.skip-link")
    assert not _on_screen(skip.bounding_box())  # out of sight until focused
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.className") == "skip-link"
    assert page.evaluate("document.activeElement.textContent") == "Skip to content"
    assert _on_screen(skip.bounding_box())
    page.keyboard.press("Enter")
    page.wait_for_url("**/#content")  # a same-page jump reaches page.url a moment later
    # The next stop is inside <main>: the top bar's links are skipped.
    page.keyboard.press("Tab")
    assert page.evaluate("!!document.activeElement.closest('main#content')")
    assert page.console_errors == []


def test_sortable_headers_sort_by_keyboard(rated, live_server, chromium_browser):
    project, lead = rated
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-judges", args=[project.slug]))
    average = page.locator("#judge-table thead th").last
    button = average.get_by_role("button", name="Average")
    assert average.get_attribute("aria-sort") is None

    def averages():
        values = page.eval_on_selector_all(
            "#judge-table tbody tr td:last-child", "cells => cells.map(c => c.dataset.value)"
        )
        return [float(v) for v in values if v]

    # Tab from the header before it, as a keyboard user would, then Enter: descending.
    average.locator("xpath=preceding-sibling::th[1]").get_by_role("button").focus()
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Average"
    page.keyboard.press("Enter")
    assert average.get_attribute("aria-sort") == "descending"
    assert averages() == sorted(averages(), reverse=True)
    page.keyboard.press("Space")  # again: ascending
    assert average.get_attribute("aria-sort") == "ascending"
    assert averages() == sorted(averages())
    # Sorting by another column moves aria-sort there: one sorted header at a time.
    page.locator("#judge-table thead th").first.get_by_role("button").press("Enter")
    assert page.locator("#judge-table thead th[aria-sort]").count() == 1
    assert average.get_attribute("aria-sort") is None
    button.click()  # a pointer still sorts too
    assert average.get_attribute("aria-sort") == "descending"
    # The agreement page's annotator table sorts the same way.
    page.goto(live_server.url + reverse("dash-agreement", args=[project.slug]))
    ratings = page.locator("table.sortable thead th").nth(1)
    ratings.get_by_role("button", name="Ratings").press("Enter")
    assert ratings.get_attribute("aria-sort") == "descending"
    assert page.console_errors == []


def _on_screen(box) -> bool:
    return bool(box) and box["y"] + box["height"] > 0 and box["x"] + box["width"] > 0
