"""The keyboard never gets lost on the annotate page: `z` opens the pair's first
image in the viewer, `[` / `]` step through all its images (prompt, Left, Right), and closing
the viewer (Esc, Close) hands the keyboard back to the rating form, so a digit rates and Enter
submits instead of opening the viewer again. Debian's Chromium through Playwright at 1366×768."""

import pytest

from annotation.models import Assignment, Rating
from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.models import Project, Task
from projects.scale import to_canonical
from tests.annotate.test_browser import WAIT_MS, log_in_and_start, wait_for_next_pair
from tests.factories import member, write_image, write_jsonl

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

DESKTOP = {"width": 1366, "height": 768}
# Each image its own colour: its own asset, so its own address.
COLOURS = {
    "prompt.png": (230, 200, 60),
    "a1.png": (200, 40, 40),
    "a2.png": (160, 20, 90),
    "b1.png": (40, 90, 200),
    "b2.png": (20, 150, 120),
}


@pytest.fixture
def reader(tmp_path):
    """An annotator of a 7-point task whose 4 pairs hold five images each: one in the prompt
    and two in each response, between text (as an interleaved reasoning answer)."""
    folder = tmp_path / "images"
    for name, colour in COLOURS.items():
        write_image(folder / name, color=colour, size=(64, 48))
    records = [
        {
            "id": f"steps-{i}-secretmodelA-vs-secretmodelB",
            "prompt_source": "unit",
            "prompt_content": [["text", f"Explain this chart, take {i}"], ["image", "prompt.png"]],
            "response_a": {
                "model_name": "secretmodelA",
                "response_content": [
                    ["text", "Step one"],
                    ["image", "a1.png"],
                    ["text", "Step two"],
                    ["image", "a2.png"],
                ],
            },
            "response_b": {
                "model_name": "secretmodelB",
                "response_content": [["image", "b1.png"], ["text", "Then"], ["image", "b2.png"]],
            },
        }
        for i in range(4)
    ]
    source = write_jsonl(tmp_path / "steps.jsonl", records)
    pairs_import(source, project_slug="steps", task_slug="steps", images_dir=folder)
    project = Project.objects.get(slug="steps")
    Project.objects.filter(pk=project.pk).update(scale_points=7)
    task = Task.objects.get(project=project, slug="steps")
    Pair.objects.filter(task=task).update(status=Pair.Status.QUEUED)
    return member("reader", project)


def start(page, live_server) -> int:
    page.set_viewport_size(DESKTOP)
    return log_in_and_start(page, live_server.url, "reader")


def wait_open(page):
    page.wait_for_selector("#zoom[open]", timeout=WAIT_MS)


def wait_closed(page):
    page.wait_for_selector("#zoom:not([open])", state="attached", timeout=WAIT_MS)


def shown_images(page) -> list[str]:
    """The addresses of the images the viewer draws (visible stages and images)."""
    return page.eval_on_selector_all(
        "#zoom .viewer-stage:not([hidden]) img",
        "imgs => imgs.filter(i => getComputedStyle(i).visibility === 'visible')"
        ".map(i => i.getAttribute('src'))",
    )


def pair_images(page) -> list[str]:
    """The pair's images in reading order: the prompt's, then Left's, then Right's."""
    return [
        href
        for scope in (".prompt", "#left", "#right")
        for href in page.eval_on_selector_all(
            f"#workspace {scope} a.zoomable", "links => links.map(a => a.href)"
        )
    ]


def focus_is_on_the_rating_form(page) -> bool:
    return page.evaluate("document.activeElement === document.getElementById('rating-form')")


def stored(assignment_id: int, score: int) -> bool:
    assignment = Assignment.objects.get(pk=assignment_id)
    rating = Rating.objects.get(assignment=assignment)
    return assignment.status == Assignment.Status.SUBMITTED and rating.overall == to_canonical(
        score, 7, assignment.swapped
    )


def test_z_opens_the_viewer_esc_closes_it_then_5_and_enter_rate_and_show_the_next_pair(
    live_server, browser_page, reader
):
    page = browser_page
    first = start(page, live_server)

    page.keyboard.press("z")
    wait_open(page)
    assert shown_images(page) == [pair_images(page)[0]], "not the prompt's image"
    page.keyboard.press("Escape")
    wait_closed(page)
    assert focus_is_on_the_rating_form(page)
    page.keyboard.press("5")
    assert page.is_checked("#rating-form input[name=overall][value='5']")
    page.keyboard.press("Enter")
    second = wait_for_next_pair(page, first)
    assert not page.is_visible("#zoom"), "Enter opened the viewer again"
    assert stored(first, 5)

    # The path with the mouse: click an image, Close, a digit, Enter.
    page.locator("#left a.zoomable img").first.click()
    wait_open(page)
    page.get_by_role("button", name="Close").click()
    wait_closed(page)
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    third = wait_for_next_pair(page, second)

    # And by keyboard only: focus the image link, Enter opens it, Esc, a digit, Enter.
    page.focus("#right a.zoomable")
    page.keyboard.press("Enter")
    wait_open(page)
    assert len(page.context.pages) == 1, "the image opened in a new tab"
    page.keyboard.press("Escape")
    wait_closed(page)
    page.keyboard.press("7")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "id => document.getElementById('workspace')?.dataset.assignment !== String(id)",
        arg=third,
        timeout=WAIT_MS,
    )
    assert stored(second, 3) and stored(third, 7)
    assert page.console_errors == []


def test_brackets_step_through_every_image_of_the_pair_and_closing_gives_the_keys_back(
    live_server, browser_page, reader
):
    page = browser_page
    start(page, live_server)
    order = pair_images(page)
    assert len(order) == 5 and len(set(order)) == 5

    page.keyboard.press("z")
    wait_open(page)
    seen = [shown_images(page)[0]]
    for _ in range(len(order) - 1):
        page.keyboard.press("]")
        seen.append(shown_images(page)[0])
    assert seen == order
    assert page.inner_text("#zoom [data-viewer-name]").endswith("(5 of 5)")
    # The last image: ] stays there and says so; [ goes back.
    page.keyboard.press("]")
    assert shown_images(page) == [order[-1]]
    page.wait_for_function(
        "() => document.querySelector('#zoom .viewer-status').textContent.startsWith('Last image')",
        timeout=WAIT_MS,
    )
    page.keyboard.press("[")
    assert shown_images(page) == [order[-2]]

    # Compare stays on while stepping: Left's step 1 with Right's step 1, then step 2.
    page.keyboard.press("[")
    page.keyboard.press("[")
    assert shown_images(page) == [order[1]]  # Left image 1
    page.keyboard.press("c")
    assert shown_images(page) == [order[1], order[3]]
    page.keyboard.press("]")
    assert shown_images(page) == [order[2], order[4]]

    # Keys inside the viewer never rate; closing gives them back to the form.
    assert page.eval_on_selector_all("#rating-form input:checked", "els => els.length") == 0
    page.keyboard.press("Escape")
    wait_closed(page)
    assert focus_is_on_the_rating_form(page)
    page.keyboard.press("2")
    assert page.is_checked("#rating-form input[name=overall][value='2']")

    # Typing in a field, z and the brackets are text.
    page.keyboard.press("r")
    page.keyboard.type("z [x] z")
    assert page.input_value("#rating-form textarea[name=rationale]") == "z [x] z"
    assert not page.is_visible("#zoom")
    assert page.console_errors == []


def test_the_help_lists_every_key_and_closing_it_gives_the_keys_back(
    live_server, browser_page, reader
):
    page = browser_page
    start(page, live_server)
    page.get_by_role("button", name="Shortcuts").click()
    page.wait_for_selector("#shortcuts[open]", timeout=WAIT_MS)
    keys = page.eval_on_selector_all("#shortcuts kbd", "els => els.map(e => e.textContent)")
    for key in ("1", "7", "0", "Backspace", "j", "k", "Tab", "o", "↑", "↓", "Enter", "Ctrl"):
        assert key in keys, key
    for key in ("r", "s", "f", "z", "?", "Esc", "[", "]", "+", "−", "c", "x", "w"):
        assert key in keys, key
    # Closed from its button (which had the focus), Enter submits rather than reopening it.
    page.keyboard.press("Escape")
    page.wait_for_selector("#shortcuts:not([open])", state="attached", timeout=WAIT_MS)
    assert focus_is_on_the_rating_form(page)
    assert page.console_errors == []
