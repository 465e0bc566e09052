"""Every dashboard opens in Chromium with its charts drawn and no console error."""

import pytest
from django.urls import reverse

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 10_000
PASSWORD = "pw-dash-lead-1"


def test_each_dashboard_renders_its_charts_without_errors(rated, live_server, browser_page):
    # `rated` first: its judge runs use asyncio, which cannot start inside Playwright's loop.
    project, lead = rated
    lead.set_password(PASSWORD)
    lead.save()
    page = browser_page
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + "/", timeout=WAIT_MS)
    charts = {"dash-agreement": 2, "dash-judges": 2}
    for name in ["dash-overview", "dash-agreement", "dash-disagreements", "dash-judges",
                 "dash-models"]:  # fmt: skip
        page.goto(live_server.url + reverse(name, args=[project.slug]))
        assert page.locator("nav.tabs a[aria-current=page]").count() == 1, name
        drawn = page.locator("svg.chart")
        assert drawn.count() >= charts.get(name, 0), name
        for index in range(drawn.count()):
            box = drawn.nth(index).bounding_box()
            assert box and box["width"] > 50 and box["height"] > 20, (name, index)
    # The judges table sorts on a header click (a descending sort of the Average column).
    page.goto(live_server.url + reverse("dash-judges", args=[project.slug]))
    page.click("#judge-table thead th:last-child")
    values = page.eval_on_selector_all(
        "#judge-table tbody tr td:last-child", "cells => cells.map(c => c.dataset.value)"
    )
    numbers = [float(v) for v in values if v]
    assert numbers == sorted(numbers, reverse=True)
    assert page.console_errors == []
