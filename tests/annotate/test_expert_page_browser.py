"""The expert's page in a real browser, as an expert paid by the hour uses it: compare without
scrolling, correct a slip safely, keep their place, on a laptop and on a phone.
Debian's Chromium through Playwright; pairs with long answers and 256 px images, as MMRB2's."""

import pytest
from django.urls import reverse

from annotation.models import AspectScore, Assignment, Rating
from content.models import Pair
from projects.scale import to_canonical
from tests.annotate.test_browser import (
    PASSWORD,
    WAIT_MS,
    log_in_and_start,
    path_of,
    shown_assignment,
    wait_for_next_pair,
)
from tests.axe import serious_violations
from tests.factories import member, queued_pairs
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

LAPTOPS = [(1366, 768), (1440, 900)]


@pytest.fixture
def long_pairs(tmp_path):
    """Six pairs whose responses are 256 px images and twelve paragraphs: without the
    fitted layout the page is ~1,800 px tall."""
    return queued_pairs(tmp_path, count=6, image_size=(256, 256), paragraphs=12)


@pytest.fixture
def expert(long_pairs):
    return member("expert", long_pairs.project, password=PASSWORD)


def in_view(page, selector: str) -> bool:
    """Whether the element's box lies inside the window (a first line: its top part)."""
    return page.eval_on_selector(
        selector,
        """el => { const r = el.getBoundingClientRect();
                   return r.top >= 0 && r.left >= 0 && r.top + Math.min(r.height, 20) <= innerHeight
                          && r.right <= innerWidth + 1; }""",
    )


@pytest.mark.parametrize("size", LAPTOPS, ids=lambda s: f"{s[0]}x{s[1]}")
def test_three_keyboard_submits_keep_the_scale_and_both_responses_in_view_without_scrolling(
    live_server, browser_page, expert, size
):
    page = browser_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    current = log_in_and_start(page, live_server.url)
    start_y = page.evaluate("window.scrollY")
    for _ in range(3):
        assert page.evaluate("window.scrollY") == start_y
        assert in_view(page, "#rating-form .scale-row")  # the Overall scale, all seven points
        assert in_view(page, "#rating-form .scale-row .point:last-child")
        assert in_view(page, "#left .response-body > :first-child")
        assert in_view(page, "#right .response-body > :first-child")
        left, right = (page.locator(f"#{side}").bounding_box() for side in ("left", "right"))
        assert left["y"] == right["y"] and left["height"] == right["height"]
        # The long answers scroll inside their columns, not the page.
        assert page.evaluate("document.documentElement.scrollHeight <= innerHeight")
        assert page.eval_on_selector("#left .response-body", "b => b.scrollHeight > b.clientHeight")
        page.keyboard.press("4")
        page.keyboard.press("Enter")
        current = wait_for_next_pair(page, current)
    assert page.evaluate("window.scrollY") == start_y
    assert page.console_errors == []


def test_two_then_three_corrects_overall_and_sets_no_aspect_and_a_key_clears_a_row(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    assignment_id = log_in_and_start(page, live_server.url)
    page.keyboard.press("2")
    page.keyboard.press("3")
    checked = page.eval_on_selector_all(
        "#rating-form input[type=radio]:checked", "els => els.map(e => [e.name, e.value])"
    )
    assert checked == [["overall", "3"]]
    assert "Overall preference: 3 · Left slightly better" in page.inner_text("#row-status")
    assert page.get_attribute("#rating-form .scale-row.active", "aria-current") == "true"

    page.keyboard.press("j")  # to the first aspect, a slip, then cleared
    page.keyboard.press("6")
    assert page.is_checked("input[name=aspect_faithfulness][value='6']")
    page.keyboard.press("0")
    assert not page.locator("input[name=aspect_faithfulness]:checked").count()
    page.keyboard.press("Enter")
    wait_for_next_pair(page, assignment_id)
    assignment = Assignment.objects.get(pk=assignment_id)
    rating = Rating.objects.get(assignment=assignment)
    assert rating.overall == to_canonical(3, 7, assignment.swapped)
    assert not AspectScore.objects.filter(rating=rating).exists()
    assert page.console_errors == []


def test_arrow_keys_scroll_the_responses_and_scroll_together_is_remembered(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    current = log_in_and_start(page, live_server.url)
    tops = "() => [...document.querySelectorAll('.response-body')].map(b => b.scrollTop)"
    page.keyboard.press("ArrowDown")
    page.keyboard.press("ArrowDown")
    left, right = page.evaluate(tops)
    assert left > 0 and right > 0 and page.evaluate("window.scrollY") == 0

    page.click(".view-prefs > summary")
    page.check("#pref-sync")
    page.click(".view-prefs > summary")
    box = page.locator("#left .response-body").bounding_box()
    page.mouse.move(box["x"] + box["width"] / 2, box["y"] + box["height"] / 2)
    page.mouse.wheel(0, 600)  # the expert scrolls the left answer down
    page.wait_for_function(
        "() => { const [l, r] = document.querySelectorAll('.response-body');"
        " return r.scrollTop > 0 && Math.abs((l.scrollTop / (l.scrollHeight - l.clientHeight))"
        " - (r.scrollTop / (r.scrollHeight - r.clientHeight))) < 0.02; }",
        timeout=WAIT_MS,
    )
    page.keyboard.press("5")
    page.keyboard.press("Enter")
    wait_for_next_pair(page, current)
    assert page.is_checked("#pref-sync")  # the next pair keeps the expert's choice
    assert page.console_errors == []


def test_the_position_counts_skips_and_flags_and_a_reopened_pair_keeps_its_place(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    first = log_in_and_start(page, live_server.url)
    position = lambda: page.inner_text("#workspace .position")  # noqa: E731
    assert position() == "Pair 1 of 6"
    page.keyboard.press("s")
    page.keyboard.press("Enter")  # the first preset reason
    second = wait_for_next_pair(page, first)
    assert position() == "Pair 2 of 6"
    page.keyboard.press("f")
    page.keyboard.press("Enter")
    third = wait_for_next_pair(page, second)
    assert position() == "Pair 3 of 6"
    # the confirmation, on its line under the pair counter
    assert "Flagged to the leads" in page.text_content("#workspace .toast")
    page.keyboard.press("7")
    page.keyboard.press("Enter")
    fourth = wait_for_next_pair(page, third)
    assert position() == "Pair 4 of 6"

    page.goto(live_server.url + reverse("annotate", args=[first]))  # the skipped pair
    assert position() == "Pair 1 of 6"
    assert page.eval_on_selector("#rating-form .scale-row", "f => f.disabled") is True
    assert (
        page.eval_on_selector("#rating-form .point", "p => getComputedStyle(p).cursor")
        == "not-allowed"
    )
    page.goto(live_server.url + reverse("annotate", args=[third]))  # the rated one
    assert position() == "Pair 3 of 6"
    page.goto(live_server.url + reverse("annotate", args=[fourth]))
    assert position() == "Pair 4 of 6"
    assert page.console_errors == []


def test_back_after_a_submit_shows_the_saved_rating_and_saving_it_again_works(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    first = log_in_and_start(page, live_server.url)
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    second = wait_for_next_pair(page, first)

    page.go_back()
    page.wait_for_function(
        "first => document.getElementById('workspace').dataset.assignment === String(first)",
        arg=first,
        timeout=WAIT_MS,
    )
    page.wait_for_load_state("load")  # htmx may reload the page: its keys must be bound
    assert page.is_checked("#rating-form input[name=overall][value='2']")
    assert "Save changes" in page.inner_text("#rating-form button[type=submit]")
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    page.wait_for_function(
        "() => document.getElementById('workspace').dataset.assignment !== undefined"
        " && document.querySelector('#workspace .toast').textContent.includes('saved')",
        timeout=WAIT_MS,
    )
    assignment = Assignment.objects.get(pk=first)
    stored = Rating.objects.get(assignment=assignment).overall
    assert stored == to_canonical(3, 7, assignment.swapped)
    assert page.console_errors == []
    assert shown_assignment(page) == second  # back where the expert was


def test_a_recent_rating_is_named_by_its_prompt_and_score_and_save_changes_returns_to_the_pair(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    first = log_in_and_start(page, live_server.url)
    page.keyboard.press("1")
    page.keyboard.press("Enter")
    second = wait_for_next_pair(page, first)

    page.click(".recent > summary")
    entry = page.locator(".recent li").first
    prompt_text = Pair.objects.get(assignments__pk=first).prompt.content[0][1]
    assert prompt_text.split("*")[0].strip() in entry.inner_text()
    assert "Left much better" in entry.inner_text()
    entry.locator("a").click()
    page.wait_for_url(f"**{reverse('annotate', args=[first])}?from={second}", timeout=WAIT_MS)
    assert page.is_checked("#rating-form input[name=overall][value='1']")
    page.keyboard.press("2")
    page.keyboard.press("Enter")
    wait_for_next_pair(page, first)
    assert shown_assignment(page) == second
    assert path_of(page.url) == reverse("annotate", args=[second])
    assert page.text_content("#workspace .toast").strip() == "Changes saved."
    assert page.console_errors == []


def test_at_390_px_the_scale_is_one_row_inside_the_window(live_server, browser_page, expert):
    page = browser_page
    page.set_viewport_size({"width": 390, "height": 844})
    log_in_and_start(page, live_server.url)
    boxes = [
        page.locator("#rating-form .scale-row").first.locator(".point").nth(n).bounding_box()
        for n in range(7)
    ]
    assert len({round(box["y"]) for box in boxes}) == 1, "the scale wrapped"
    assert all(box["x"] >= 0 and box["x"] + box["width"] <= 390 for box in boxes)
    assert [b["x"] for b in boxes] == sorted(b["x"] for b in boxes)  # Left … Right
    assert page.evaluate("document.documentElement.scrollWidth") <= 390
    assert page.locator(".position").bounding_box()["height"] < 30  # "Pair 1 of 6", one line
    # The dock stays at the bottom of the window while the expert reads down the answers.
    page.mouse.wheel(0, 1500)
    page.wait_for_timeout(200)
    assert in_view(page, "#rating-form .scale-row")
    assert page.console_errors == []


@pytest.mark.parametrize("size", [(1366, 768), (390, 844)], ids=["laptop", "phone"])
def test_axe_finds_nothing_serious_on_the_annotate_and_done_pages(
    live_server, browser_page, expert, size
):
    page = browser_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    current = log_in_and_start(page, live_server.url)
    assert serious_violations(page) == []
    assert page.locator("h1").count() == 1
    page.keyboard.press("4")
    page.keyboard.press("Enter")
    wait_for_next_pair(page, current)
    page.click(".recent > summary")
    assert serious_violations(page) == []
    assert page.console_errors == []
    Pair.objects.exclude(assignments__annotator=expert).update(status=Pair.Status.CANDIDATE)
    page.goto(live_server.url + "/")
    page.get_by_role("button", name="Continue").click()
    settled(page)
    for _ in range(6):
        if page.locator("#done-title").count():
            break
        shown = page.locator("#workspace").get_attribute("data-assignment")
        page.keyboard.press("4")
        page.keyboard.press("Enter")
        page.wait_for_function(
            """shown => document.getElementById("done-title")
                || document.getElementById("workspace").dataset.assignment !== shown""",
            arg=shown,
            timeout=WAIT_MS,
        )
    page.wait_for_selector("#done-title", timeout=WAIT_MS)
    assert serious_violations(page) == []
    # The pairs withdrawn above may have had their images preloaded as the likely next ones:
    # those answer 404 now, as they should. Anything else is an error.
    assert [e for e in page.console_errors if "404" not in e or "/assets/" not in e] == []
