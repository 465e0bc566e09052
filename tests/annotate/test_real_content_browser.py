"""The annotate page on realistic content, in Chromium at 1366×768, 390×844 and 360×740: the
demo's four tasks, MJ-Bench's 1024 px photos and MMRB2's longest reasoning pair and its
interleaved pair with the most images. Both responses begin on the first screen, above the
rating dock; the header takes at most two lines on a phone, its account links in a menu the
keyboard opens; at 1366×768 no response image is cut: a short answer shows all its images
whole, a long one none cut on the first screen and each whole once scrolled to. On a phone the
page scrolls under the dock at the window's bottom: each response image brought into view as
the browser brings one (a link, the keyboard's focus) is whole in its box and above the dock,
the dock closed or opened by "More"; so is the Right response focused, and at the page's end;
a score tapped does not move the page, and the next pair begins at its top."""

import contextlib

import pytest
from playwright.sync_api import TimeoutError as PlaywrightTimeout

from tests.annotate.real_content import (
    BEGINNINGS,
    DESKTOP,
    HEADER_LINES,
    RESPONSE_IMAGES,
    SMALL_PHONE,
    VIEWPORTS,
    demo_annotator,
    mjbench_annotator,
    mmrb2_annotator,
    out_of_sight,
    wait_for_images,
    whole,
)
from tests.axe import serious_violations
from tests.pages.browsing import WAIT_MS, log_in
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def start_each_task(page, base_url):
    """Open each task of the home page in turn (Start), yielding its name once its first
    pair is shown with its visible images loaded."""
    page.goto(base_url + "/")
    names = page.locator("table.queue td.task").all_inner_texts()
    assert names
    for name in names:
        page.goto(base_url + "/")
        page.locator("table.queue tr", has_text=name).get_by_role("button").click()
        page.wait_for_url("**/annotate/**", timeout=WAIT_MS)
        settled(page)
        wait_for_images(page)
        yield name.strip()


def check_first_screen(page, viewport, name, *, all_whole: bool):
    where = f"{name} at {viewport['width']}x{viewport['height']}"
    assert page.evaluate("window.scrollY") == 0, where
    for side in page.evaluate(BEGINNINGS):
        assert side["heading"] and side["content"], (where, side)
    if viewport["width"] < 641:
        assert page.evaluate(HEADER_LINES) <= 2, where
    assert page.evaluate("document.documentElement.scrollWidth") <= viewport["width"], where
    if viewport != DESKTOP:
        check_clear_of_the_dock(page, where)
        return
    images = page.evaluate(RESPONSE_IMAGES)
    for image in images:
        assert image["height"] <= image["boxHeight"] + 0.5, (where, image)
        if all_whole:
            assert whole(image), (where, image)
        else:
            assert whole(image) or out_of_sight(image), (where, image)
    # Scrolled to, each image is whole in its box.
    for index, image in enumerate(images):
        page.evaluate(
            """index => document.querySelectorAll('#workspace .response-body a.zoomable img')[index]
                .scrollIntoView({block: 'nearest'})""",
            index,
        )
        assert whole(page.evaluate(RESPONSE_IMAGES)[index]), (where, image)
    page.evaluate("document.querySelectorAll('.response-body').forEach(b => b.scrollTop = 0)")


# Response image `index` brought into view as the browser brings an element into view (nearest
# edge), then its rectangle, its box's, the dock's top and the window's height.
INTO_VIEW = """index => {
    const img = document.querySelectorAll('#workspace .response-body a.zoomable img')[index];
    img.scrollIntoView({block: 'nearest'});
    const body = img.closest('.response-body');
    const r = img.getBoundingClientRect(), b = body.getBoundingClientRect();
    const top = b.top + body.clientTop;
    return {alt: img.alt, top: r.top, bottom: r.bottom, height: r.height,
            boxTop: top, boxBottom: top + body.clientHeight,
            dockTop: document.querySelector('#workspace .dock').getBoundingClientRect().top,
            windowHeight: window.innerHeight, scrollY: window.scrollY};
}"""

# The Right response's box focused (as Tab focuses it), and its rectangle and the dock's.
FOCUS_RIGHT = """() => {
    const body = document.querySelector('#right .response-body');
    body.blur();
    body.focus();
    const r = body.getBoundingClientRect();
    return {top: r.top, bottom: r.bottom,
            dockTop: document.querySelector('#workspace .dock').getBoundingClientRect().top};
}"""

# The page scrolled to its end, and the Right response's rectangle and the dock's.
AT_THE_END = """() => {
    window.scrollTo(0, document.documentElement.scrollHeight);
    const r = document.getElementById('right').getBoundingClientRect();
    return {top: r.top, bottom: r.bottom,
            dockTop: document.querySelector('#workspace .dock').getBoundingClientRect().top};
}"""

CLEAR = "m => m.top >= -1 && m.bottom <= m.dockTop + 1 && (m.boxTop === undefined"
CLEAR += " || (m.top >= m.boxTop - 1 && m.bottom <= m.boxBottom + 1))"


def clear_of_the_dock(image) -> bool:
    """Whole in its box, inside the window and above the dock, within a pixel."""
    in_box = "boxTop" not in image or whole(image)
    return in_box and image["top"] >= -1 and image["bottom"] <= image["dockTop"] + 1


def measured_once_settled(page, script: str, arg=None):
    """`script`'s measure once it is clear of the dock, or as it is after WAIT_MS: the page
    fits its images again when they load and the dock when its fonts do (a frame later)."""
    with contextlib.suppress(PlaywrightTimeout):
        page.wait_for_function(f"arg => ({CLEAR})(({script})(arg))", arg=arg, timeout=WAIT_MS)
    return page.evaluate(script, arg)


def back_to_the_top(page):
    page.evaluate(
        """() => { document.activeElement.blur(); window.scrollTo(0, 0);
                   document.querySelectorAll('.response-body').forEach(b => b.scrollTop = 0); }"""
    )


def check_clear_of_the_dock(page, where):
    """On a phone: each response image scrolled into view, the Right response focused and the
    Right response at the page's end are whole above the dock, with the dock closed and opened
    by "More"; a tap on a score and the focus on Submit leave the page where it is."""
    # Scoring does not move the page: a tap on a point (which focuses its radio button), the
    # focus on Submit.
    point = page.locator("#rating-form .scale-row:not(.compact) .point").nth(3).bounding_box()
    page.mouse.click(point["x"] + point["width"] / 2, point["y"] + point["height"] / 2)
    page.wait_for_function("() => document.querySelector('#rating-form input:checked')")
    page.locator("#rating-form button[type=submit]").focus()
    assert page.evaluate("window.scrollY") == 0, where
    page.evaluate("document.querySelectorAll('#rating-form input').forEach(i => i.checked = false)")
    back_to_the_top(page)
    count = page.locator("#workspace .response-body a.zoomable img").count()
    for state in ("closed", "open"):
        if state == "open":
            page.locator("#workspace .dock-more").click()
            page.wait_for_function("() => document.querySelector('#workspace .dock.open')")
        for index in range(count):
            image = measured_once_settled(page, INTO_VIEW, index)
            assert clear_of_the_dock(image), (where, state, image)
            back_to_the_top(page)
        box = measured_once_settled(page, FOCUS_RIGHT)
        assert clear_of_the_dock(box), (where, state, "the Right response focused", box)
        back_to_the_top(page)
        box = measured_once_settled(page, AT_THE_END)
        assert clear_of_the_dock(box), (where, state, "the Right response at the end", box)
        back_to_the_top(page)
    page.locator("#workspace .dock-more").click()
    page.wait_for_function("() => document.querySelector('#workspace .dock.closed')")


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1366", "390", "360"])
def test_the_demo_tasks_begin_both_responses_on_the_first_screen_and_show_their_images_whole(
    tmp_path, live_server, chromium_browser, viewport
):
    user = demo_annotator(tmp_path)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    seen = []
    for name in start_each_task(page, live_server.url):
        check_first_screen(page, viewport, name, all_whole=True)
        seen.append(name)
    assert len(seen) == 4
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1366", "390", "360"])
def test_mjbench_photos_begin_on_the_first_screen_and_are_whole(
    tmp_path, live_server, chromium_browser, viewport
):
    user = mjbench_annotator(tmp_path)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    for name in start_each_task(page, live_server.url):
        check_first_screen(page, viewport, name, all_whole=True)
        if viewport == DESKTOP:  # 1024 px photos, drawn as large as their box allows
            for image in page.evaluate(RESPONSE_IMAGES):
                assert image["height"] >= image["boxHeight"] - 20, image
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", VIEWPORTS, ids=["1366", "390", "360"])
def test_mmrb2_long_reasoning_and_interleaved_pairs_begin_on_the_first_screen_and_cut_no_image(
    tmp_path, live_server, chromium_browser, viewport
):
    user = mmrb2_annotator(tmp_path)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    (name,) = start_each_task(page, live_server.url)
    first = page.get_attribute("#workspace", "data-assignment")
    check_first_screen(page, viewport, name, all_whole=False)
    # Rated after a look at the whole Right response (on a phone the page scrolls to its end):
    # the next pair begins at the top all the same.
    page.evaluate("window.scrollTo(0, document.documentElement.scrollHeight)")
    page.locator("#rating-form .scale-row:not(.compact) .point").nth(2).click()
    page.locator("#rating-form button[type=submit]").click()
    page.wait_for_function(
        "first => document.getElementById('workspace').dataset.assignment !== first",
        arg=first,
        timeout=WAIT_MS,
    )
    wait_for_images(page)
    check_first_screen(page, viewport, name, all_whole=False)
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL_PHONE], ids=["1366", "360"])
def test_the_account_menu_opens_by_keyboard_and_the_rating_page_offers_no_api_links(
    tmp_path, live_server, chromium_browser, viewport
):
    user = demo_annotator(tmp_path, pairs=1)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    # On the home page the account's links are there (in the menu on a phone).
    if viewport == SMALL_PHONE:
        assert not page.get_by_role("link", name="Password").is_visible()
        page.locator(".account-menu > summary").focus()
        page.keyboard.press("Enter")
    assert page.get_by_role("link", name="Password").is_visible()
    assert page.get_by_role("button", name="Log out").is_visible()
    next(start_each_task(page, live_server.url))
    # The annotator's rating page does not advertise the API.
    assert page.get_by_role("link", name="API", exact=True).count() == 0
    assert page.get_by_role("link", name="API tokens").count() == 0
    if viewport == SMALL_PHONE:
        page.locator(".account-menu > summary").focus()
        page.keyboard.press("Enter")
    assert page.get_by_role("link", name="Password").is_visible()
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL_PHONE], ids=["1366", "360"])
@pytest.mark.parametrize("scheme", ["light", "dark"])
def test_the_rating_page_of_each_demo_task_has_no_serious_violation(
    tmp_path, live_server, chromium_browser, viewport, scheme
):
    user = demo_annotator(tmp_path, pairs=1)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    page.emulate_media(color_scheme=scheme)
    for name in start_each_task(page, live_server.url):
        assert serious_violations(page) == [], name
    assert page.console_errors == []
