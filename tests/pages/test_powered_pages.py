"""The judges page with prediction-powered figures and the planner, the overview's target line
and the settings page's sampling form: no serious axe problem and no page wider than the
screen, at 1366×768 and on a phone."""

import os

import pytest
from django.urls import reverse

from judging.services.sampling import sample_start
from tests.axe import serious_violations
from tests.metrics.test_powered_accuracy import world  # noqa: F401  (a fixture)
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_the_powered_figures_read_well_on_every_screen(
    world,  # noqa: F811
    live_server,
    chromium_browser,
    viewport,
):
    project, _task, _truth, lead = world
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    for name in ("dash-judges", "dash-overview", "project-settings"):
        open_settled(page, live_server.url + reverse(name, args=[project.slug]))
        if shots := os.environ.get("ARBITER_SCREENSHOTS"):  # for a person to look at
            page.screenshot(path=f"{shots}/{name}-{viewport['width']}.png", full_page=True)
        assert serious_violations(page) == [], name
        width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, name
    assert page.console_errors == []
    open_settled(page, live_server.url + reverse("dash-judges", args=[project.slug]))
    assert page.get_by_text("How many more ratings").is_visible()
    assert page.get_by_text("rated and 90 judged pairs").first.is_visible()


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_rating_a_sample_keeps_every_judge_cell_labelled_and_readable(
    world,  # noqa: F811
    live_server,
    chromium_browser,
    scheme,
):
    project, _task, _truth, lead = world
    sample_start(project, budget=None)
    page = log_in(chromium_browser, live_server.url, lead, viewport=DESKTOP)
    page.emulate_media(color_scheme=scheme)
    open_settled(page, live_server.url + reverse("dash-judges", args=[project.slug]))
    cells = page.locator("#judge-table tbody tr td.num")
    assert cells.count() == 6  # three judges: the task and the average
    for index in range(0, cells.count(), 2):  # each task cell: both figures, each named
        text = cells.nth(index).inner_text()
        assert "Classical" in text and "Prediction-powered" in text, text
        assert "a sample's estimate from" in text, text
    assert serious_violations(page) == [], scheme
    assert page.console_errors == []
