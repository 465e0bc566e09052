"""The lead's pages on the demo's data, in a browser: the project tabs take one line at
1366×768 and never widen a phone's page, their menus open from the keyboard; no chart text is
clipped, every chart text has one size, no count reads "n=—" or a bare "n="; axe finds nothing
serious in the light or the dark theme."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from demo.seed import LEAD, demo_seed
from tests.axe import serious_violations
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SMALL_PHONE = {"width": 360, "height": 740}
PAGES = ["dash-overview", "dash-agreement", "dash-judges", "dash-models", "dash-hours",
         "dash-exports", "run-list", "ensemble", "project-settings"]  # fmt: skip

TABS_LINE = """() => {
  const items = [...document.querySelectorAll("nav.tab-groups .tab-bar > li")];
  const tops = items.map(item => Math.round(item.getBoundingClientRect().top));
  const one = document.querySelector("nav.tab-groups .tab-bar > li").getBoundingClientRect().height;
  return {groups: items.length, tops: [...new Set(tops)], tallest: Math.max(...items.map(
    item => item.getBoundingClientRect().height)), one: one};
}"""

CHART_TEXTS = """() => [...document.querySelectorAll("svg.chart")].flatMap(svg => {
  const width = svg.viewBox.baseVal.width, drawn = svg.getBoundingClientRect().width;
  return [...svg.querySelectorAll("text")].map(text => {
    const box = text.getBBox();
    return {text: text.textContent, left: box.x, right: box.x + box.width, width: width,
            scale: drawn / width, size: getComputedStyle(text).fontSize};
  });
})"""


@pytest.fixture
def demo(tasks_in_process):
    demo_seed(pairs_per_task=3)
    return User.objects.get(username=LEAD)


def urls(base: str) -> list[str]:
    return [base + reverse(name, args=["demo"]) for name in PAGES]


@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_tabs_and_charts_read_whole_at_1366(demo, live_server, chromium_browser, scheme):
    page = log_in(chromium_browser, live_server.url, demo, viewport=DESKTOP)
    page.emulate_media(color_scheme=scheme)
    for url in urls(live_server.url):
        open_settled(page, url)
        tabs = page.evaluate(TABS_LINE)
        assert tabs["groups"] == 5 and len(tabs["tops"]) == 1, (url, tabs)
        assert tabs["tallest"] <= tabs["one"] * 1.2, (url, tabs)  # no group wraps inside
        for text in page.evaluate(CHART_TEXTS):
            assert text["left"] >= -0.5 and text["right"] <= text["width"] + 0.5, (url, text)
            assert text["scale"] == pytest.approx(1, abs=0.01), (url, text)  # not stretched
            assert text["size"] == "12px", (url, text)
            assert "n=—" not in text["text"] and not text["text"].rstrip().endswith("n="), text
        body = page.inner_text("main")
        assert "n=—" not in body
        assert serious_violations(page) == [], (url, scheme)
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [PHONE, SMALL_PHONE], ids=["390", "360"])
def test_on_a_phone_the_tabs_fit_and_open_from_the_keyboard(
    demo, live_server, chromium_browser, viewport
):
    page = log_in(chromium_browser, live_server.url, demo, viewport=viewport)
    for url in urls(live_server.url):
        open_settled(page, url)
        width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
        assert width <= inner, url
    open_settled(page, live_server.url + reverse("dash-judges", args=["demo"]))
    menu = page.locator("nav.tab-groups details.tab-menu", has_text="Project")
    menu.locator("summary").focus()
    page.keyboard.press("Enter")
    members = menu.get_by_role("link", name="Members")
    members.wait_for(state="visible", timeout=WAIT_MS)
    page.keyboard.press("Tab")
    assert page.evaluate("document.activeElement.textContent") == "Members"
    box = members.bounding_box()
    assert box and box["x"] >= 0 and box["x"] + box["width"] <= viewport["width"]
    width, inner = page.evaluate("[document.documentElement.scrollWidth, window.innerWidth]")
    assert width <= inner  # the open menu too
    page.keyboard.press("Escape")
    assert not menu.evaluate("menu => menu.open")
    page.keyboard.press("Enter")  # the focus went back to the menu's name: it opens again
    members.wait_for(state="visible", timeout=WAIT_MS)
    page.keyboard.press("Tab")
    page.keyboard.press("Enter")
    page.wait_for_url("**" + reverse("project-members", args=["demo"]), timeout=WAIT_MS)
    assert page.console_errors == []
