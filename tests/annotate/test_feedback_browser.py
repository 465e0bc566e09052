"""The annotate page's feedback covers nothing: the confirmation of a rating, a skip
or a flag sits where no control or counter is, the progress bar shows the pairs done (none on
the first pair), and a rating made a moment ago is "just now". Debian's Chromium through
Playwright at 1366×768 and 390×844."""

import pytest

from tests.annotate.test_browser import log_in_and_start, wait_for_next_pair

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SIZES = [(1366, 768), (390, 844)]

# Every box the confirmation must leave free: controls, links, menus and the pair counter.
OVERLAPS = """() => {
    const note = document.querySelector("#workspace .toast span");
    if (!note) return {missing: true};
    const box = note.getBoundingClientRect();
    const hit = (other) => !(other.right <= box.left || other.left >= box.right
        || other.bottom <= box.top || other.top >= box.bottom);
    const others = document.querySelectorAll(
        "button, a, summary, input, select, textarea, label, .position, [role=progressbar]");
    const covered = [];
    for (const element of others) {
        if (note.contains(element) || element.contains(note)) continue;
        const other = element.getBoundingClientRect();
        if (other.width === 0 || other.height === 0) continue;
        if (hit(other)) covered.push(element.outerHTML.slice(0, 80));
    }
    const inside = box.top >= 0 && box.left >= 0 && box.bottom <= innerHeight
        && box.right <= innerWidth && box.width > 0 && box.height > 0;
    return {text: note.textContent, covered, inside};
}"""


def bar(page) -> tuple[str, str, float]:
    """The progress bar's aria-valuenow, aria-valuemax and the width of its fill in pixels."""
    progress = page.locator("#workspace [role=progressbar]")
    fill = progress.locator("span").bounding_box()
    return (
        progress.get_attribute("aria-valuenow"),
        progress.get_attribute("aria-valuemax"),
        fill["width"] if fill else 0.0,
    )


def assert_covers_nothing(page, text: str):
    found = page.evaluate(OVERLAPS)
    assert found.get("text") == text, found
    assert found["covered"] == [], found
    assert found["inside"], f"the confirmation is not on screen: {found}"


@pytest.mark.parametrize("size", SIZES, ids=["laptop", "phone"])
def test_confirmations_cover_no_control_or_counter_and_the_bar_counts_pairs_done(
    live_server, browser_page, expert, size
):
    page = browser_page
    page.set_viewport_size({"width": size[0], "height": size[1]})
    current = log_in_and_start(page, live_server.url)
    total = page.inner_text("#workspace .position").split(" of ")[1]
    assert bar(page) == ("0", total, 0.0)  # nothing done yet: an empty bar
    assert page.locator("#workspace .toast span").count() == 0

    page.keyboard.press("4")
    page.keyboard.press("Enter")
    current = wait_for_next_pair(page, current)
    assert_covers_nothing(page, "Rating saved.")
    valuenow, _, width = bar(page)
    full = page.locator("#workspace [role=progressbar]").bounding_box()["width"]
    assert valuenow == "1"
    assert width == pytest.approx(full / int(total), abs=1.5)

    page.keyboard.press("s")
    page.keyboard.press("Enter")
    current = wait_for_next_pair(page, current)
    assert_covers_nothing(page, "Pair skipped.")
    assert page.get_by_role("button", name="Undo").is_visible()

    page.keyboard.press("f")
    page.keyboard.press("Enter")
    current = wait_for_next_pair(page, current)
    assert_covers_nothing(page, "Flagged to the leads; the pair is skipped for you.")
    assert bar(page)[0] == "3"

    # The menus open over the page as before, and the confirmation is not over them.
    page.click(".recent > summary")
    entry = page.locator(".recent li").first
    assert "just now" in entry.inner_text()
    assert "0 minutes" not in entry.inner_text()
    assert page.console_errors == []
