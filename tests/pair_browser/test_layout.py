"""The pair browser and the disagreement queue in Chromium on realistic content (the demo
project; real MJ-Bench pairs with their photos and MMRB2's interleaved pairs when ../shared
has them): at 1366×768 the
first pairs are on screen without scrolling, each row with its prompt, its images at their set
size (nothing moves as they load) and its generators; at 390×844 and 360×740 no page is wider
than the screen; axe finds nothing serious."""

import pytest
from django.core.management import call_command
from django.urls import reverse
from playwright.sync_api import expect

from imports.services.pair_import import pairs_import
from projects.models import Membership, Project
from tests.axe import serious_violations
from tests.conftest import SHARED_MMRB2
from tests.factories import member
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

MJBENCH = SHARED_MMRB2.parent / "mjbench"
SMALL_PHONE = {"width": 360, "height": 740}
PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"
# Every image of the rows on screen has loaded (lazy ones load when near the viewport).
IMAGES_LOADED = """() => {
  const shown = [...document.querySelectorAll('.pair-thumbs img')]
    .filter((img) => img.getBoundingClientRect().top < window.innerHeight);
  return shown.length > 0 && shown.every((img) => img.complete && img.naturalWidth > 0);
}"""


@pytest.fixture
def demo(tasks_in_process):
    """The demo project as `make demo` seeds it, and its lead."""
    call_command("demo", stdout=open("/dev/null", "w"))  # noqa: SIM115
    project = Project.objects.get(slug="demo")
    return project, project.memberships.get(role=Membership.Role.LEAD).user


@pytest.fixture
def mjbench():
    """MJ-Bench's 100 quality pairs of people (real photos, real captions) and a lead."""
    if not MJBENCH.is_dir():
        pytest.skip("MJ-Bench files not in ../shared")
    pairs_import(
        MJBENCH / "quality/human/captions_human.json", project_slug="mj", task_slug="human",
        file_format="mjbench", images_dir=MJBENCH / "quality/human/examples_human",
    )  # fmt: skip
    project = Project.objects.get(slug="mj")
    return project, member("mj-lead", project, role=Membership.Role.LEAD)


@pytest.fixture
def mmrb2(request):
    """MMRB2's 1,000 interleaved pairs (long ids, no prompt text, text and images in the
    responses, three historical ratings each, so the disagreement queue has rows)."""
    if not SHARED_MMRB2.is_dir():
        pytest.skip("MMRB2 files not in ../shared")
    pairs_import(
        SHARED_MMRB2 / "interleaved_response_only.json", project_slug="mmrb2",
        task_slug="interleaved", file_format="mmrb2",
        images_dir=request.getfixturevalue("mmrb2_images"),
    )  # fmt: skip
    project = Project.objects.get(slug="mmrb2")
    return project, member("mmrb2-lead", project, role=Membership.Role.LEAD)


@pytest.fixture(params=["demo", "mjbench", "mmrb2"])
def content(request):
    return request.getfixturevalue(request.param)


def _first_rows_on_screen(page, rows_selector: str) -> None:
    rows = page.locator(rows_selector)
    expect(rows.first).to_be_visible(timeout=WAIT_MS)
    assert page.evaluate("window.scrollY") == 0
    height = page.viewport_size["height"]
    boxes = [rows.nth(n).bounding_box() for n in range(min(3, rows.count()))]
    # The first rows end above the fold: the lead sees pairs, not only filters.
    assert all(box["y"] + box["height"] <= height for box in boxes), (boxes, height)


def test_at_1366_the_first_pairs_show_with_prompt_images_and_generators(
    content, live_server, chromium_browser
):
    project, lead = content
    page = log_in(chromium_browser, live_server.url, lead, viewport=DESKTOP)
    open_settled(page, live_server.url + reverse("dash-pairs", args=[project.slug]))
    _first_rows_on_screen(page, "#pairs-bulk tbody tr")
    # The default columns fit the screen: nothing to scroll sideways to.
    scroll, client = page.locator("#pairs-bulk .table-scroll").evaluate(
        "box => [box.scrollWidth, box.clientWidth]"
    )
    assert scroll <= client + 1, (scroll, client)
    first = page.locator("#pairs-bulk tbody tr").first
    prompt = first.locator(".pair-prompt")
    if prompt.count():  # a pair whose source shipped no prompt says so instead
        text = prompt.get_attribute("title")
        assert text and prompt.inner_text().strip() == text
        # Two lines at most, cut by CSS: the cell is no taller than the images.
        assert prompt.bounding_box()["height"] <= 2 * 1.3 * 15 + 4
    page.wait_for_function(IMAGES_LOADED, timeout=WAIT_MS)
    for img in first.locator(".pair-thumbs img").all():
        box = img.bounding_box()
        assert (round(box["width"]), round(box["height"])) == (
            int(img.get_attribute("width")), int(img.get_attribute("height"))
        )  # fmt: skip
        assert img.get_attribute("loading") == "lazy"
    generators = first.locator(".pair-generator")
    expect(generators).to_have_count(2)
    assert all(text.strip() for text in generators.all_inner_texts())
    assert serious_violations(page) == []
    # The more filters open, the first rows still show.
    page.get_by_text("More filters and columns").click()
    expect(page.locator("#pf-judge")).to_be_visible()
    open_settled(page, live_server.url + reverse("dash-disagreements", args=[project.slug])
                 + "?state=all")  # fmt: skip
    rows = page.locator("table.queue-table tbody tr")
    if rows.first.locator("[data-row-open]").count():
        expect(rows.first.locator(".pair-generator")).to_have_count(2)
        page.wait_for_function(IMAGES_LOADED, timeout=WAIT_MS)
    assert serious_violations(page) == []
    assert page.console_errors == []


def test_on_a_phone_no_page_is_wider_than_the_screen(content, live_server, chromium_browser):
    """At 390×844 and 360×740, in one test: the content is imported once for both."""
    project, lead = content
    for viewport in (PHONE, SMALL_PHONE):
        page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
        pairs = reverse("dash-pairs", args=[project.slug])
        queue = reverse("dash-disagreements", args=[project.slug]) + "?state=all"
        for path in (pairs, pairs + "?ratings_min=abc", pairs + "?cols=prompt,images,generators",
                     queue):  # fmt: skip
            open_settled(page, live_server.url + path)
            page.locator("details.pairs-more").evaluate_all(
                "ds => ds.forEach((d) => d.open = true)"
            )
            scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
            where = (viewport["width"], path)
            assert scroll_width <= inner_width + 1, (where, scroll_width, inner_width)
            assert serious_violations(page) == [], where
        assert [e for e in page.console_errors if "status of 400" not in e] == [], viewport
        page.context.close()
