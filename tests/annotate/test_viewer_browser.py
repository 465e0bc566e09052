"""The image viewer of the annotate page (static/viewer.js) in a real browser: it opens fitted
and much larger than the inline image, zooms (keys, buttons, wheel around the cursor), pans
(drag, arrows), compares Left and Right with one shared transform, flickers, swipes, closes with
Esc and gives the keyboard back to the rating. Debian's Chromium through Playwright."""

import pytest
from PIL import Image, ImageDraw

from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.models import Project, Task
from tests.annotate.test_browser import WAIT_MS, log_in_and_start
from tests.factories import member, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
SIZE = 256  # MMRB2-like: small images an expert wants to see much larger


def _scene(path, edit=None):
    """A 256 px input image; an edit draws one more shape on it (the difference to spot)."""
    image = Image.new("RGB", (SIZE, SIZE), (235, 232, 220))
    draw = ImageDraw.Draw(image)
    for i in range(0, SIZE, 32):
        draw.line([(i, 0), (i, SIZE)], fill=(180, 180, 190))
    draw.ellipse([60, 60, 196, 196], fill=(60, 120, 200))
    if edit == "square":
        draw.rectangle([150, 20, 230, 100], fill=(210, 40, 40))
    if edit == "triangle":
        draw.polygon([(40, 230), (120, 150), (200, 230)], fill=(40, 160, 60))
    image.save(path)


@pytest.fixture
def editor(tmp_path):
    """An annotator of an image-editing task: one input image in the prompt, one edit per
    response (256 × 256 each), 2 pairs."""
    images = tmp_path / "edit-images"
    images.mkdir()
    _scene(images / "input.png")
    _scene(images / "edit-a.png", "square")
    _scene(images / "edit-b.png", "triangle")
    records = [
        {
            "id": f"edit-{i}-secretmodelA-vs-secretmodelB",
            "prompt_source": "unit",
            "prompt_content": [["text", f"Add something, take {i}"], ["image", "input.png"]],
            "response_a": {
                "model_name": "secretmodelA",
                "response_content": [["image", "edit-a.png"]],
            },
            "response_b": {
                "model_name": "secretmodelB",
                "response_content": [["image", "edit-b.png"]],
            },
        }
        for i in range(2)
    ]
    source = write_jsonl(tmp_path / "edit-pairs.jsonl", records)
    pairs_import(source, project_slug="edit", task_slug="edit", images_dir=images)
    project = Project.objects.get(slug="edit")
    Project.objects.filter(pk=project.pk).update(scale_points=7)
    Pair.objects.filter(task=Task.objects.get(project=project, slug="edit")).update(
        status=Pair.Status.QUEUED
    )
    return member("editor", project)


def start(page, live_server, username, viewport=DESKTOP):
    page.set_viewport_size(viewport)
    log_in_and_start(page, live_server.url, username)


def open_viewer(page, selector):
    """Click the image of the `selector` link; wait until the viewer shows it, loaded."""
    page.locator(selector).locator("img").click()
    page.wait_for_selector("#zoom[open]", timeout=WAIT_MS)
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('#zoom .viewer-stage img'))
            .every(img => !img.getAttribute('src') || (img.complete && img.naturalWidth > 0))""",
        timeout=WAIT_MS,
    )


def images(page):
    """Each viewer image, with its box relative to its stage and what is drawn."""
    return page.evaluate(
        """() => Array.from(document.querySelectorAll('#zoom .viewer-stage')).flatMap(
            (stage, s) => Array.from(stage.querySelectorAll('img')).map((img, i) => {
                const box = img.getBoundingClientRect(), room = stage.getBoundingClientRect();
                return {stage: s, index: i, src: img.getAttribute('src'),
                    x: box.x - room.x, y: box.y - room.y, width: box.width, height: box.height,
                    transform: img.style.transform, clip: img.style.clipPath,
                    visible: stage.offsetParent !== null
                        && getComputedStyle(img).visibility === 'visible',
                    stageBox: [room.x, room.y, room.width, room.height]};
            }))"""
    )


def visible(page):
    return [image for image in images(page) if image["visible"]]


def shown(page):
    """The one image drawn in single and flicker mode."""
    (image,) = visible(page)
    return image


def wait_for_status(page, text):
    page.wait_for_function(
        "text => document.querySelector('#zoom .viewer-status').textContent.includes(text)",
        arg=text,
        timeout=WAIT_MS,
    )
    return page.inner_text("#zoom .viewer-status")


def href(page, selector):
    return page.eval_on_selector(selector, "link => link.href")


def test_an_image_opens_fitted_far_larger_than_inline_and_zooms_with_keys_buttons_and_wheel(
    live_server, browser_page, editor
):
    page = browser_page
    start(page, live_server, "editor")
    inline = page.eval_on_selector(
        "#left a.zoomable img", "img => img.getBoundingClientRect().width"
    )
    open_viewer(page, "#left a.zoomable")

    dialog = page.get_by_role("dialog", name="Image viewer")
    assert dialog.is_visible()
    box = page.eval_on_selector("#zoom", "d => d.getBoundingClientRect().toJSON()")
    assert box["width"] >= 0.9 * DESKTOP["width"] and box["height"] >= 0.85 * DESKTOP["height"]
    fitted = shown(page)
    assert fitted["src"] == href(page, "#left a.zoomable")
    assert fitted["width"] >= 2 * inline, (fitted["width"], inline)
    # Fitted: the whole image is in view, centred.
    assert fitted["height"] <= fitted["stageBox"][3] + 1
    assert abs(fitted["x"] - (fitted["stageBox"][2] - fitted["width"]) / 2) <= 1
    assert "Zoom" in wait_for_status(page, "(fit), Left image 1")
    # Past 200 % the pixels are drawn crisp.
    assert (
        page.eval_on_selector("#zoom .viewer-stage img", "i => getComputedStyle(i).imageRendering")
        == "pixelated"
    )

    page.keyboard.press("+")
    bigger = shown(page)["width"]
    assert bigger == pytest.approx(fitted["width"] * 1.25, rel=0.01)
    page.get_by_role("button", name="Zoom in").click()
    assert shown(page)["width"] == pytest.approx(bigger * 1.25, rel=0.01)
    page.get_by_role("button", name="Zoom out").click()
    page.keyboard.press("-")
    assert shown(page)["width"] == pytest.approx(fitted["width"], rel=0.01)

    # The wheel zooms around the cursor: once the image overflows the stage, the image point
    # under the cursor stays put (an axis with room to spare stays centred).
    stage_x, stage_y = fitted["stageBox"][:2]
    cursor = (
        stage_x + fitted["x"] + fitted["width"] * 0.7,
        stage_y + fitted["y"] + fitted["height"] * 0.3,
    )
    page.mouse.move(*cursor)
    page.mouse.wheel(0, -600)
    page.wait_for_function(
        "w => document.querySelector('#zoom .viewer-stage img')"
        ".getBoundingClientRect().width > w + 1",
        arg=fitted["width"],
        timeout=WAIT_MS,
    )
    after = shown(page)
    assert after["width"] > fitted["stageBox"][2] and after["height"] > fitted["stageBox"][3]
    u = (cursor[0] - stage_x - after["x"]) / after["width"]
    v = (cursor[1] - stage_y - after["y"]) / after["height"]
    assert u == pytest.approx(0.7, abs=0.01) and v == pytest.approx(0.3, abs=0.01)
    assert page.evaluate("window.scrollY") == 0, "the wheel scrolled the page behind"

    # 1: natural size; zoom goes up to at least 800 % of it; 0: fit again.
    page.keyboard.press("1")
    assert shown(page)["width"] == pytest.approx(SIZE, abs=0.5)
    assert "Zoom 100 %" in wait_for_status(page, "Zoom 100 %")
    for _ in range(20):
        page.keyboard.press("=")
    assert shown(page)["width"] >= 8 * SIZE
    page.keyboard.press("0")
    assert shown(page)["width"] == pytest.approx(fitted["width"], abs=0.5)
    assert page.console_errors == []


def test_dragging_and_the_arrow_keys_pan_the_zoomed_image(live_server, browser_page, editor):
    page = browser_page
    start(page, live_server, "editor")
    open_viewer(page, "#right a.zoomable")
    for _ in range(6):
        page.keyboard.press("+")
    before = shown(page)
    stage_x, stage_y, width, height = before["stageBox"]
    assert before["width"] > width and before["height"] > height, "not zoomed past the stage"

    centre = (stage_x + width / 2, stage_y + height / 2)
    page.mouse.move(*centre)
    page.mouse.down()
    page.mouse.move(centre[0] - 90, centre[1] - 70, steps=6)
    page.mouse.up()
    dragged = shown(page)
    assert dragged["x"] == pytest.approx(before["x"] - 90, abs=1)
    assert dragged["y"] == pytest.approx(before["y"] - 70, abs=1)
    assert dragged["width"] == pytest.approx(before["width"])
    assert page.is_visible("#zoom[open]"), "a drag must not close the viewer"

    page.keyboard.press("ArrowLeft")
    assert shown(page)["x"] > dragged["x"] + 10
    page.keyboard.press("ArrowUp")
    assert shown(page)["y"] > dragged["y"] + 10
    # Panning stops at the image's edge: it never leaves the stage uncovered.
    for _ in range(30):
        page.keyboard.press("ArrowRight")
    edge = shown(page)
    assert edge["x"] + edge["width"] == pytest.approx(width, abs=1)
    assert page.console_errors == []


def test_compare_shows_left_and_right_side_by_side_with_one_transform(
    live_server, browser_page, editor
):
    page = browser_page
    start(page, live_server, "editor")
    open_viewer(page, "#right a.zoomable")
    assert len(visible(page)) == 1

    page.keyboard.press("c")
    page.wait_for_function(
        "() => document.querySelectorAll('#zoom .viewer-stage:not([hidden])').length === 2",
        timeout=WAIT_MS,
    )
    left, right = visible(page)
    assert left["src"] == href(page, "#left a.zoomable")
    assert right["src"] == href(page, "#right a.zoomable")
    assert left["stageBox"][0] + left["stageBox"][2] <= right["stageBox"][0], "not side by side"
    labels = page.eval_on_selector_all(
        "#zoom .viewer-label:not(:empty)", "els => els.map(e => e.textContent)"
    )
    assert labels == ["Left", "Right"]
    assert page.get_attribute("[data-viewer=compare]", "aria-pressed") == "true"
    assert "comparing Left and Right" in wait_for_status(page, "comparing Left and Right")

    # Zoom with the wheel over the right stage, then drag the left one: both follow.
    page.mouse.move(right["stageBox"][0] + 100, right["stageBox"][1] + 120)
    page.mouse.wheel(0, -500)
    page.wait_for_function(
        "() => document.querySelectorAll('#zoom .viewer-stage img')[0]"
        ".getBoundingClientRect().width > 800",
        timeout=WAIT_MS,
    )
    start_point = (left["stageBox"][0] + 200, left["stageBox"][1] + 200)
    page.mouse.move(*start_point)
    page.mouse.down()
    page.mouse.move(start_point[0] + 60, start_point[1] - 40, steps=4)
    page.mouse.up()
    left, right = visible(page)
    assert left["transform"] == right["transform"] and "scale" in left["transform"]
    assert (left["x"], left["y"], left["width"], left["height"]) == pytest.approx(
        (right["x"], right["y"], right["width"], right["height"]), abs=0.5
    )
    assert "comparing Left and Right" in wait_for_status(page, "comparing Left and Right")

    # c again: back to one image, the one that was opened, at the same zoom.
    page.keyboard.press("c")
    only = shown(page)
    assert only["src"] == href(page, "#right a.zoomable")
    assert only["width"] == pytest.approx(left["width"], rel=0.01)
    assert page.console_errors == []


def test_a_prompt_image_is_compared_with_the_left_edit(live_server, browser_page, editor):
    page = browser_page
    start(page, live_server, "editor")
    open_viewer(page, ".prompt a.zoomable")
    page.get_by_role("button", name="Compare").click()
    first, second = visible(page)
    assert first["src"] == href(page, ".prompt a.zoomable")
    assert second["src"] == href(page, "#left a.zoomable")
    assert "comparing Prompt and Left" in wait_for_status(page, "comparing Prompt and Left")
    text = page.inner_text("#zoom")
    assert "secretmodel" not in text
    assert page.console_errors == []


def test_flicker_switches_the_image_in_place_and_swipe_clips_right_over_left(
    live_server, browser_page, editor
):
    page = browser_page
    start(page, live_server, "editor")
    left_src, right_src = href(page, "#left a.zoomable"), href(page, "#right a.zoomable")
    open_viewer(page, "#left a.zoomable")
    page.keyboard.press("+")
    page.keyboard.press("ArrowRight")
    before = shown(page)
    assert before["src"] == left_src

    page.keyboard.press("x")
    flicked = shown(page)
    assert flicked["src"] == right_src
    assert flicked["transform"] == before["transform"]
    assert page.get_attribute("[data-viewer=flicker]", "aria-pressed") == "true"
    assert "showing Right" in wait_for_status(page, "flicker, showing Right")
    page.get_by_role("button", name="Flicker").click()
    assert shown(page)["src"] == left_src

    page.keyboard.press("w")
    base, over = visible(page)
    assert (base["src"], over["src"]) == (left_src, right_src)
    assert base["stage"] == over["stage"] == 0
    assert base["clip"] == "" and over["clip"] == "inset(0px 0px 0px 50%)"
    assert base["transform"] == over["transform"] == before["transform"]
    assert (
        page.eval_on_selector(
            "#zoom .viewer-stage img:nth-of-type(2)", "i => getComputedStyle(i).zIndex"
        )
        == "1"
    )
    assert page.is_visible("#zoom .viewer-divider")
    page.fill("[data-viewer-split]", "30")
    assert visible(page)[1]["clip"] == "inset(0px 0px 0px 30%)"
    assert "Right over Left from 30 %" in wait_for_status(page, "from 30 %")

    page.keyboard.press("w")
    assert shown(page)["src"] == left_src
    assert not page.is_visible("#zoom .viewer-divider")
    assert page.console_errors == []


def test_escape_closes_the_viewer_focus_returns_and_the_keys_rate_again(
    live_server, browser_page, editor
):
    page = browser_page
    start(page, live_server, "editor")

    # Keyboard only: focus the link, Enter opens; keys inside the viewer never rate.
    page.focus("#right a.zoomable")
    page.keyboard.press("Enter")
    page.wait_for_selector("#zoom[open]", timeout=WAIT_MS)
    assert len(page.context.pages) == 1, "the image opened in a new tab"
    page.keyboard.press("1")
    page.keyboard.press("c")
    page.keyboard.press("Escape")
    page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)
    assert page.eval_on_selector_all("#rating-form input:checked", "els => els.length") == 0
    # The focus goes to the rating form, not back to the link (Enter there would reopen it).
    assert page.evaluate("document.activeElement.id") == "rating-form"

    page.keyboard.press("6")
    assert page.is_checked("#rating-form input[name=overall][value='6']")

    # The close button does the same.
    open_viewer(page, "#left a.zoomable")
    page.get_by_role("button", name="Close").click()
    page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)
    # The focus goes to the rating form, not back to the link (Enter there would reopen it).
    assert page.evaluate("document.activeElement.id") == "rating-form"
    page.keyboard.press("3")
    assert page.is_checked("#rating-form input[name=overall][value='3']")
    assert page.console_errors == []


def test_the_viewer_has_an_accessible_name_labelled_buttons_and_a_key_legend(
    live_server, browser_page, editor
):
    page = browser_page
    start(page, live_server, "editor")
    open_viewer(page, "#left a.zoomable")
    dialog = page.get_by_role("dialog", name="Image viewer")
    for name in ("Zoom in", "Zoom out", "Fit", "100 %", "Compare", "Flicker", "Swipe", "Close"):
        assert dialog.get_by_role("button", name=name, exact=True).count() == 1, name
    assert page.get_attribute("#zoom .viewer-status", "role") == "status"
    legend = page.inner_text("#viewer-keys")
    for key in ("+", "0", "1", "c", "x", "w", "Esc"):
        assert key in legend
    assert page.eval_on_selector("#zoom .viewer-stage img", "img => img.alt") == "Left image 1"
    assert page.console_errors == []


def test_an_image_without_counterpart_opens_with_the_pair_modes_off(
    live_server, browser_page, expert
):
    """The 7-point task of test_browser: a text prompt, one image per response (40 × 30 and
    30 × 40): still much larger than inline, and compare keeps one transform despite the
    different sizes."""
    page = browser_page
    start(page, live_server, "expert")
    inline = page.eval_on_selector(
        "#left a.zoomable img", "img => img.getBoundingClientRect().width"
    )
    open_viewer(page, "#left a.zoomable")
    assert shown(page)["width"] >= 2 * inline
    page.keyboard.press("c")
    left, right = visible(page)
    assert left["transform"] == right["transform"]
    page.keyboard.press("Escape")
    page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)

    # No image on the prompt side here; a lone image (no counterpart) keeps the modes off.
    page.evaluate("document.querySelector('#right a.zoomable').remove()")
    open_viewer(page, "#left a.zoomable")
    assert page.is_disabled("[data-viewer=compare]")
    page.keyboard.press("c")
    page.keyboard.press("x")
    assert len(visible(page)) == 1
    assert page.console_errors == []


def test_the_viewer_works_at_phone_width_and_compare_stacks(live_server, browser_page, editor):
    page = browser_page
    start(page, live_server, "editor", viewport=PHONE)
    inline = page.eval_on_selector(
        "#left a.zoomable img", "img => img.getBoundingClientRect().width"
    )
    page.locator("#left a.zoomable").scroll_into_view_if_needed()
    open_viewer(page, "#left a.zoomable")
    fitted = shown(page)
    assert fitted["width"] >= min(2 * inline, PHONE["width"] * 0.9)
    assert page.evaluate("document.documentElement.scrollWidth") <= PHONE["width"]
    page.get_by_role("button", name="Zoom in").click()
    assert shown(page)["width"] > fitted["width"]
    page.get_by_role("button", name="Compare").click()
    top, bottom = visible(page)
    assert top["stageBox"][1] + top["stageBox"][3] <= bottom["stageBox"][1] + 1, "not stacked"
    assert top["transform"] == bottom["transform"]
    assert bottom["stageBox"][1] + bottom["stageBox"][3] <= PHONE["height"]
    page.get_by_role("button", name="Close").click()
    page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)
    assert page.console_errors == []
