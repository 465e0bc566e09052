"""The annotate page on realistic content, in Chromium at 1366×768, 390×844 and 360×740: the
demo's four tasks, MJ-Bench's 1024 px photos and MMRB2's longest reasoning pair and its
interleaved pair with the most images. Both responses begin on the first screen, above the
rating dock; the header takes at most two lines on a phone, its account links in a menu the
keyboard opens; at 1366×768 no response image is cut: a short answer shows all its images
whole, a long one none cut on the first screen and each whole once scrolled to."""

import pytest

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
        page.wait_for_load_state("networkidle")
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
