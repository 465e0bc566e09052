"""The keyboard around the annotate page's text fields, in Chromium on the demo's content: Esc
leaves the rationale (what was typed stays, digits rate again, Enter submits), `f` puts the
keys in the flag's details (the reason keeps its default), a question sent gives the keys back
to the rating; the aspects' labels are shown whole."""

import pytest

from tests.annotate.real_content import DESKTOP, SMALL_PHONE, demo_annotator
from tests.annotate.test_real_content_browser import start_each_task
from tests.pages.browsing import WAIT_MS, log_in

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

FOCUSED = "() => { const e = document.activeElement; return e && (e.name || e.id); }"
OVERALL = "() => (document.querySelector('#rating-form input[name=overall]:checked') || {}).value"


def open_first_task(tmp_path, live_server, chromium_browser, viewport=DESKTOP):
    user = demo_annotator(tmp_path, pairs=2)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    next(start_each_task(page, live_server.url))
    return page


def wait_for_next_pair(page, previous):
    page.wait_for_function(
        "previous => document.getElementById('workspace').dataset.assignment !== previous",
        arg=previous,
        timeout=WAIT_MS,
    )


def test_esc_leaves_the_rationale_then_digits_rate_and_enter_submits(
    tmp_path, live_server, chromium_browser
):
    page = open_first_task(tmp_path, live_server, chromium_browser)
    first = page.get_attribute("#workspace", "data-assignment")
    page.keyboard.press("r")
    assert page.evaluate(FOCUSED) == "rationale"
    page.keyboard.type("Left counts right")
    page.keyboard.press("Escape")
    assert page.evaluate(FOCUSED) == "rating-form"
    page.keyboard.press("2")
    assert page.evaluate(OVERALL) == "2"
    assert page.input_value("textarea[name=rationale]") == "Left counts right"  # no digit typed
    page.keyboard.press("Enter")
    wait_for_next_pair(page, first)
    assert page.console_errors == []


def test_f_puts_the_keys_in_the_flags_details_and_esc_gives_them_back(
    tmp_path, live_server, chromium_browser
):
    page = open_first_task(tmp_path, live_server, chromium_browser)
    reason = page.input_value("#flag-panel select[name=flag_reason]")
    page.keyboard.press("f")
    assert page.evaluate(FOCUSED) == "flag_note"
    page.keyboard.type("broken image")
    assert page.input_value("#flag-panel input[name=flag_note]") == "broken image"
    assert page.input_value("#flag-panel select[name=flag_reason]") == reason
    page.keyboard.press("Escape")
    assert page.get_attribute("#flag-panel", "open") is None
    page.keyboard.press("6")
    assert page.evaluate(OVERALL) == "6"
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL_PHONE], ids=["1366", "360"])
def test_after_a_question_is_sent_the_keys_rate_again(
    tmp_path, live_server, chromium_browser, viewport
):
    page = open_first_task(tmp_path, live_server, chromium_browser, viewport)
    first = page.get_attribute("#workspace", "data-assignment")
    page.locator("#pair-thread > summary").click()
    page.fill("#question-body", "Is the left picture cropped on purpose?")
    page.get_by_role("button", name="Send to the leads").click()
    page.wait_for_function(
        "() => document.getElementById('announcer').textContent.trim() !== ''", timeout=WAIT_MS
    )
    assert page.evaluate(FOCUSED) == "rating-form"
    assert page.get_attribute("#pair-thread", "open") is None
    page.keyboard.press("5")
    assert page.evaluate(OVERALL) == "5"
    page.keyboard.press("Enter")
    wait_for_next_pair(page, first)
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, SMALL_PHONE], ids=["1366", "360"])
def test_the_aspects_labels_are_whole(tmp_path, live_server, chromium_browser, viewport):
    user = demo_annotator(tmp_path, pairs=1)
    page = log_in(chromium_browser, live_server.url, user, viewport=viewport)
    for name in start_each_task(page, live_server.url):
        if viewport == SMALL_PHONE:
            page.get_by_role("button", name="More").click()
        legends = page.locator("#aspects-strip legend")
        assert legends.count() >= 2, name
        for legend in legends.all():
            cut = legend.evaluate(
                "e => e.scrollWidth > e.clientWidth + 1 || getComputedStyle(e).textOverflow"
                " === 'ellipsis' && getComputedStyle(e).overflow !== 'visible'"
            )
            assert not cut, (name, legend.inner_text())
    assert page.console_errors == []
