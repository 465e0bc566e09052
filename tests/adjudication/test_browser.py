"""In Chromium, as a lead: open the disagreement queue, open its first pair, decide it with a
key and land on the next undecided pair; the key help; the annotators' image viewer on the pair
page; no key fires while typing or while a dialog is open; axe finds nothing at 1366 and 390 px
on the queue and the pair page (and its key help)."""

import pytest
from django.urls import reverse

from annotation.models import Adjudication
from tests.adjudication.conftest import QUEUE
from tests.axe import violations
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_lead_decides_with_keys_and_the_next_undecided_pair_opens(
    contested, live_server, chromium_browser
):
    project, lead, ids = contested
    first, second, third = (ids[n] for n in QUEUE[:3])
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-disagreements", args=[project.slug]))
    page.get_by_role("link", name=project.pairs.get(pk=first).external_id).click()
    page.wait_for_url(f"**/pairs/{first}/?from=queue", timeout=WAIT_MS)

    page.keyboard.press("?")
    keys = page.locator("#keys")
    keys.wait_for(state="visible", timeout=WAIT_MS)
    assert "Decide: drop the pair" in keys.inner_text()
    page.keyboard.press("a")  # a dialog is open: no decision
    page.keyboard.press("Escape")
    keys.wait_for(state="hidden", timeout=WAIT_MS)
    assert page.input_value("select[name=decision]") == ""

    # d chooses drop and puts the cursor in the reason; there, letters are text.
    page.keyboard.press("d")
    assert page.evaluate("document.activeElement.name") == "note"
    page.keyboard.type("a bad crop on both sides")
    assert page.input_value("select[name=decision]") == "drop"
    page.keyboard.press("Control+Enter")
    page.wait_for_url(f"**/pairs/{second}/?from=queue", timeout=WAIT_MS)
    assert "Decision recorded for" in page.inner_text("main")
    decision = Adjudication.objects.get(pair_id=first)
    assert (decision.decision, decision.note) == ("drop", "a bad crop on both sides")

    # With the reason written first (Esc leaves the field), the key records at once.
    page.fill("textarea[name=note]", "B follows the prompt")
    page.keyboard.press("Escape")
    page.keyboard.press("b")
    page.wait_for_url(f"**/pairs/{third}/?from=queue", timeout=WAIT_MS)
    assert Adjudication.objects.get(pair_id=second).decision == "keep_b"
    assert page.console_errors == []


def test_the_pair_page_opens_images_in_the_annotators_viewer(
    contested, live_server, chromium_browser
):
    project, lead, ids = contested
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-pair", args=[project.slug, ids[QUEUE[0]]]))
    page.locator("#left a.zoomable").first.click()
    viewer = page.locator("#zoom")
    viewer.wait_for(state="visible", timeout=WAIT_MS)
    assert page.url.endswith(f"/pairs/{ids[QUEUE[0]]}/")  # not a raw link to the file
    page.keyboard.press("c")  # compare: A beside B, named as the page names them
    page.wait_for_function(
        "() => document.getElementById('zoom').dataset.mode === 'compare'", timeout=WAIT_MS
    )
    labels = page.locator("#zoom .viewer-stage .viewer-label").all_inner_texts()
    assert [text for text in labels if text] == ["A", "B"]
    page.keyboard.press("d")  # the viewer is open: no decision
    page.keyboard.press("Escape")
    viewer.wait_for(state="hidden", timeout=WAIT_MS)
    assert page.input_value("select[name=decision]") == ""
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_queue_and_the_pair_page_have_no_violation(
    contested, live_server, chromium_browser, viewport
):
    project, lead, ids = contested
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    found = {}
    open_settled(page, live_server.url + reverse("dash-disagreements", args=[project.slug]))
    found["queue"] = violations(page)
    pair = reverse("dash-pair", args=[project.slug, ids[QUEUE[0]]]) + "?from=queue"
    open_settled(page, live_server.url + pair)
    found["pair"] = violations(page)
    page.get_by_role("button", name="Keys").click()
    page.locator("#keys").wait_for(state="visible", timeout=WAIT_MS)
    found["pair, keys"] = violations(page)
    assert {name: lines for name, lines in found.items() if lines} == {}
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= viewport["width"]  # the key help and the page fit the screen
    assert page.console_errors == []
