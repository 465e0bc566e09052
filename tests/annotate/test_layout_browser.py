"""The annotate page's layout in a real browser: images whole by default at
1366×768 (a 1024 px response image and a 256 px prompt image inside their boxes, no scrolling)
with a remembered "natural size" choice; on phones a one-row dock, both responses started on
the first screen, a swipe between them and no key hints on touch screens; in a right-to-left
page the Left response and the scale's "Left much better" stay on the left. Debian's Chromium
through Playwright."""

import pytest

from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.models import Project, Task
from tests.annotate.test_browser import WAIT_MS, log_in_and_start, wait_for_next_pair
from tests.conftest import watch_errors
from tests.factories import in_import_order, member, write_image, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}
ASPECTS = [
    {"key": "faithfulness", "label": "Faithfulness", "help": "Follows the prompt"},
    {"key": "quality", "label": "Quality", "help": "Looks right"},
]
ESSAY = [["text", f"Paragraph {n}: " + "the response explains its choice. " * 8] for n in range(12)]


def _project(tmp_path, slug, records, images):
    pairs_import(
        write_jsonl(tmp_path / f"{slug}.jsonl", records),
        project_slug=slug,
        task_slug=slug,
        images_dir=images,
    )
    project = Project.objects.get(slug=slug)
    Project.objects.filter(pk=project.pk).update(scale_points=7)
    task = Task.objects.get(project=project, slug=slug)
    Task.objects.filter(pk=task.pk).update(aspects=ASPECTS)
    Pair.objects.filter(task=task).update(status=Pair.Status.QUEUED)
    in_import_order(task)  # the tests name pair 1 and pair 2
    return project


@pytest.fixture
def editor(tmp_path):
    """An editing task: a text and a 256 px input image as the prompt; pair 1 answers with one
    1024 × 1024 image per side, pair 2 interleaves text and 1024 px images (a reasoning answer)."""
    images = tmp_path / "images"
    write_image(images / "input.png", color=(230, 200, 60), size=(256, 256))
    write_image(images / "a.png", color=(200, 40, 40), size=(1024, 1024))
    write_image(images / "b.png", color=(40, 90, 200), size=(1024, 1024))
    write_image(images / "wide.png", color=(20, 150, 120), size=(1024, 768))
    prompt = [["text", "Make the square round"], ["image", "input.png"]]
    steps = [["text", "Step one"], ["image", "wide.png"], ["text", "Step two"], ["image", "b.png"]]
    records = [
        {
            "id": "edit-1-secretmodelA-vs-secretmodelB",
            "prompt_source": "unit",
            "prompt_content": prompt,
            "response_a": {"model_name": "secretmodelA", "response_content": [["image", "a.png"]]},
            "response_b": {"model_name": "secretmodelB", "response_content": [["image", "b.png"]]},
        },
        {
            "id": "edit-2-secretmodelA-vs-secretmodelB",
            "prompt_source": "unit",
            "prompt_content": prompt,
            "response_a": {"model_name": "secretmodelA", "response_content": steps},
            "response_b": {"model_name": "secretmodelB", "response_content": steps[::-1]},
        },
    ]
    return member("editor", _project(tmp_path, "edit", records, images))


@pytest.fixture
def reader(tmp_path):
    """Three pairs whose answers start with a line of text, then a 256 px image and twelve
    paragraphs (both sides), with two aspects to rate."""
    images = tmp_path / "images"
    write_image(images / "a.png", color=(200, 40, 40), size=(256, 256))
    write_image(images / "b.png", color=(40, 90, 200), size=(256, 256))
    records = [
        {
            "id": f"long-{i}-secretmodelA-vs-secretmodelB",
            "prompt_source": "unit",
            "prompt_content": [["text", f"Explain the picture, take {i}"]],
            "response_a": {
                "model_name": "secretmodelA",
                "response_content": [["text", "First line of one"], ["image", "a.png"], *ESSAY],
            },
            "response_b": {
                "model_name": "secretmodelB",
                "response_content": [["text", "First line of two"], ["image", "b.png"], *ESSAY],
            },
        }
        for i in range(3)
    ]
    return member("reader", _project(tmp_path, "long", records, images))


def wait_for_images(page):
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('#workspace a.zoomable img'))
            .every(img => img.complete && img.naturalWidth > 0)""",
        timeout=WAIT_MS,
    )


# Each image of the workspace, with the visible box of what holds it (the response's or the
# prompt's scrolling box: inside its border, without scroll bars).
IMAGES = """() => Array.from(document.querySelectorAll('#workspace a.zoomable img')).map(img => {
    const holder = img.closest('.response-body, .prompt');
    const r = img.getBoundingClientRect(), b = holder.getBoundingClientRect();
    const top = b.top + holder.clientTop, left = b.left + holder.clientLeft;
    return {alt: img.alt, top: r.top, left: r.left, bottom: r.bottom, right: r.right,
            width: r.width, height: r.height, scrolled: holder.scrollTop,
            box: {top: top, left: left, bottom: top + holder.clientHeight,
                  right: left + holder.clientWidth, height: holder.clientHeight}};
})"""


def inside(image) -> bool:
    box = image["box"]
    return (
        image["top"] >= box["top"] - 0.5
        and image["left"] >= box["left"] - 0.5
        and image["bottom"] <= box["bottom"] + 0.5
        and image["right"] <= box["right"] + 0.5
    )


def choose_images(page, value):
    page.click(".view-prefs > summary")
    page.select_option("#pref-images", value)
    page.click(".view-prefs > summary")


def test_at_1366_a_1024_px_answer_and_a_256_px_prompt_image_are_whole_and_natural_size_is_kept(
    live_server, browser_page, editor
):
    page = browser_page
    page.set_viewport_size(DESKTOP)
    first = log_in_and_start(page, live_server.url, "editor")
    wait_for_images(page)
    prompt, left, right = page.evaluate(IMAGES)
    assert [image["alt"].split()[0] for image in (prompt, left, right)] == [
        "Prompt",
        "Left",
        "Right",
    ]
    for image in (prompt, left, right):
        assert inside(image), image
        assert image["scrolled"] == 0
    # Whole, and as large as the box allows: the answers fill their box's height, the input
    # image is shown far larger than the 95 px of it that used to show.
    for image in (left, right):
        assert image["height"] >= image["box"]["height"] - 20, image
        assert abs(image["width"] - image["height"]) <= 1  # square, not squeezed
    assert prompt["height"] >= 120 and abs(prompt["width"] - prompt["height"]) <= 1
    assert page.evaluate(
        "window.scrollY === 0 && document.documentElement.scrollHeight <= innerHeight"
    )

    # Natural size, chosen under View, is kept over a reload.
    choose_images(page, "natural")
    page.wait_for_function(
        "() => document.querySelector('#left img').clientWidth === 1024",  # inside its border
        timeout=WAIT_MS,
    )
    page.reload()
    wait_for_images(page)
    assert page.input_value("#pref-images") == "natural"
    _, left, right = page.evaluate(IMAGES)
    assert left["width"] == right["width"] == 1026 and not inside(left)  # 1 px borders
    assert page.eval_on_selector("#left .response-body", "b => b.scrollWidth > b.clientWidth")
    choose_images(page, "fit")
    page.reload()
    wait_for_images(page)
    assert page.input_value("#pref-images") == "fit"
    assert all(inside(image) for image in page.evaluate(IMAGES))

    # Interleaved answers keep their order; no image is taller or wider than its box.
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    wait_for_next_pair(page, first)
    wait_for_images(page)
    kinds = page.eval_on_selector_all(
        "#workspace .response-body",
        "bodies => bodies.map(b => Array.from(b.children, c => c.className))",
    )
    assert sorted(kinds) == [
        ["text", "zoomable", "text", "zoomable"],
        ["zoomable", "text", "zoomable", "text"],
    ]
    images = page.evaluate(IMAGES)
    assert len(images) == 5
    for image in images:
        assert image["height"] <= image["box"]["height"], image
        assert (
            image["left"] >= image["box"]["left"] - 0.5
            and image["right"] <= image["box"]["right"] + 0.5
        )
    assert page.console_errors == []


def dock_box(page):
    return page.locator("#workspace .dock").bounding_box()


def test_at_390_px_the_dock_is_one_row_and_more_opens_the_aspects(
    live_server, browser_page, reader
):
    page = browser_page
    page.set_viewport_size(PHONE)
    first = log_in_and_start(page, live_server.url, "reader")
    assert dock_box(page)["height"] <= 0.35 * PHONE["height"]
    # One row: the Overall scale's seven points and Submit side by side.
    points = [page.locator("#rating-form .point").nth(n).bounding_box() for n in range(7)]
    submit = page.locator("#rating-form button[type=submit]").bounding_box()
    assert len({round(box["y"]) for box in points}) == 1
    assert points[-1]["x"] + points[-1]["width"] <= submit["x"]
    assert (
        submit["y"] < points[0]["y"] + points[0]["height"]
        and submit["y"] + submit["height"] > points[0]["y"]
    )
    assert not page.is_visible("#aspects-strip")
    assert not page.is_visible("#rating-form textarea[name=rationale]")

    more = page.get_by_role("button", name="More")
    more.click()
    assert more.get_attribute("aria-expanded") == "true"
    assert page.is_visible("#aspects-strip .scale-row")
    assert page.is_visible("#rating-form textarea[name=rationale]")
    page.locator("#aspects-strip .scale-row").first.locator(".point").nth(5).click()
    page.locator("#rating-form .scale-row:not(.compact) .point").nth(1).click()
    more.click()
    assert more.get_attribute("aria-expanded") == "false"
    assert not page.is_visible("#aspects-strip")
    assert dock_box(page)["height"] <= 0.35 * PHONE["height"]
    page.locator("#rating-form button[type=submit]").click()
    wait_for_next_pair(page, first)
    assert page.console_errors == []


def test_without_javascript_a_phone_shows_the_whole_dock(live_server, chromium_browser, reader):
    """Nothing to open "More" with: nothing is behind it, and it is not offered."""
    context = chromium_browser.new_context(viewport=PHONE, java_script_enabled=False)
    page = watch_errors(context.new_page())
    log_in_and_start(page, live_server.url, "reader")
    for shown in (
        "#aspects-strip",
        "#rating-form textarea[name=rationale]",
        "#skip-panel > summary",
    ):
        assert page.is_visible(shown), shown
    assert not page.get_by_role("button", name="More").is_visible()
    assert page.console_errors == []
    context.close()


def first_lines_in_view(page) -> list[bool]:
    """Whether each response's first line of text is in the window, above the dock."""
    return page.evaluate(
        """() => { const dock = document.querySelector('#workspace .dock').getBoundingClientRect();
            return ['#left', '#right'].map(side => {
                const line = document.querySelector(side + ' .response-body > .text');
                const r = line.getBoundingClientRect();
                return r.top >= 0 && r.top + Math.min(r.height, 20) <= dock.top
                    && r.left >= 0 && r.right <= innerWidth + 1; }); }"""
    )


def test_at_360x740_the_first_line_of_both_responses_is_on_the_first_screen(
    live_server, browser_page, reader
):
    page = browser_page
    page.set_viewport_size(SMALL_PHONE)
    first = log_in_and_start(page, live_server.url, "reader")
    wait_for_images(page)
    assert page.evaluate("window.scrollY") == 0
    assert first_lines_in_view(page) == [True, True]
    assert dock_box(page)["height"] <= 0.35 * SMALL_PHONE["height"]
    # Each answer scrolls inside its short box; its images fit that box.
    for image in page.evaluate(IMAGES):
        assert image["height"] <= image["box"]["height"], image
    assert page.evaluate("document.documentElement.scrollWidth") <= SMALL_PHONE["width"]
    page.locator("#rating-form .scale-row:not(.compact) .point").nth(3).click()
    page.locator("#rating-form button[type=submit]").click()
    wait_for_next_pair(page, first)
    wait_for_images(page)
    assert first_lines_in_view(page) == [True, True]
    assert page.console_errors == []


@pytest.fixture
def touch_page(chromium_browser):
    """A phone: 360 × 740, touch only (Playwright's mobile emulation)."""
    context = chromium_browser.new_context(viewport=SMALL_PHONE, has_touch=True, is_mobile=True)
    yield watch_errors(context.new_page())
    context.close()


def swipe(page, selector, dx):
    """A one-finger horizontal swipe of `dx` pixels across the middle of `selector`'s box,
    as the touch screen sends it (touch and pointer events)."""
    box = page.locator(selector).bounding_box()
    x, y = box["x"] + box["width"] / 2 - dx / 2, box["y"] + min(box["height"] / 2, 80)
    cdp = page.context.new_cdp_session(page)
    cdp.send("Input.dispatchTouchEvent", {"type": "touchStart", "touchPoints": [{"x": x, "y": y}]})
    for step in range(1, 9):
        point = {"x": x + dx * step / 8, "y": y}
        cdp.send("Input.dispatchTouchEvent", {"type": "touchMove", "touchPoints": [point]})
    cdp.send("Input.dispatchTouchEvent", {"type": "touchEnd", "touchPoints": []})
    cdp.detach()


def whole_card_in_view(page, side) -> bool:
    """Whether the response's card is all in the window, above the dock."""
    return page.evaluate(
        """side => { const card = document.getElementById(side).getBoundingClientRect();
            const dock = document.querySelector('#workspace .dock').getBoundingClientRect();
            return card.top >= 0 && card.bottom <= dock.top + 1; }""",
        side,
    )


def current_response(page, side):
    """Wait until `side` is the response a swipe moved to: marked, focused, all in view."""
    page.wait_for_function(
        """side => { const card = document.getElementById(side);
            const box = card.getBoundingClientRect();
            const dock = document.querySelector('#workspace .dock').getBoundingClientRect();
            return card.classList.contains('current') && box.top >= 0 && box.bottom <= dock.top + 1
                && document.activeElement === card.querySelector('.response-body'); }""",
        arg=side,
        timeout=WAIT_MS,
    )


def test_on_a_touch_phone_the_key_hints_are_hidden_and_a_swipe_moves_between_the_responses(
    live_server, touch_page, reader
):
    page = touch_page
    log_in_and_start(page, live_server.url, "reader")
    assert page.evaluate("matchMedia('(hover: none) and (pointer: coarse)').matches")
    hints = page.locator("#workspace kbd")
    assert hints.count() >= 4  # Shortcuts ?, Submit Enter, Skip s, Flag f
    page.get_by_role("button", name="More").tap()
    assert page.is_visible("#skip-panel > summary")
    assert [hints.nth(n).is_visible() for n in range(hints.count())] == [False] * hints.count()

    page.get_by_role("button", name="More").tap()  # closed again: the dock is one row
    assert page.evaluate("window.scrollY") == 0
    assert not whole_card_in_view(page, "right")  # its first lines only
    swipe(page, "#left", -200)  # the finger moves left: on to Right
    current_response(page, "right")
    assert page.evaluate("window.scrollY") > 0
    swipe(page, "#right", 200)  # and back
    current_response(page, "left")
    # A short move is no swipe.
    swipe(page, "#left", -30)
    current_response(page, "left")
    assert page.console_errors == []


def test_in_a_right_to_left_page_left_stays_left_and_the_scale_runs_from_left_much_better(
    live_server, browser_page, reader
):
    page = browser_page
    page.set_viewport_size(DESKTOP)
    log_in_and_start(page, live_server.url, "reader")
    page.evaluate("document.documentElement.dir = 'rtl'")
    # The page itself is mirrored: the title at the right, the tools at the left...
    title = page.locator("#ws-title").bounding_box()
    tools = page.locator(".ws-tools").bounding_box()
    assert tools["x"] + tools["width"] < title["x"]
    # ...but not what Left and Right mean.
    left = page.locator("#left").bounding_box()
    right = page.locator("#right").bounding_box()
    assert left["x"] + left["width"] <= right["x"]
    points = page.locator("#rating-form .scale-row:not(.compact) .point")
    first, last = points.first.bounding_box(), points.last.bounding_box()
    assert first["x"] + first["width"] <= last["x"]
    assert points.first.get_attribute("title").startswith("Left")
    # The texts inside follow the page's direction again.
    assert page.eval_on_selector("#left", "e => getComputedStyle(e).direction") == "rtl"
    assert page.eval_on_selector(".scale", "e => getComputedStyle(e).direction") == "ltr"
    assert page.console_errors == []
