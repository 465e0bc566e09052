"""The conversation in a real browser (Chromium through Playwright): an annotator asks in the
middle of rating a pair and keeps what they entered, the lead answers on the pair page, the
annotator reads the answer; the pair's other annotator sees nothing of it until they have
rated the pair, then sees it. axe finds nothing serious on the annotate page with the thread
open, at 1366 and at 390 px, and the open menu stays inside a phone's screen."""

import pytest
from django.urls import reverse

from tests.axe import serious_violations
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

QUESTION = "Is the left image cropped on purpose?"
ANSWER = "Yes, the crop is part of the prompt."
PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


def _annotate(page, base_url, assignment):
    return open_settled(page, base_url + reverse("annotate", args=[assignment.pk]))


def _open_menu(page):
    menu = page.locator("#pair-thread")
    if menu.get_attribute("open") is None:
        menu.locator("summary").click()
    return menu


def test_an_annotator_asks_the_lead_answers_and_the_other_annotator_waits_for_their_rating(
    scene, live_server, chromium_browser
):
    base = live_server.url
    asker = log_in(chromium_browser, base, scene.asker)
    _annotate(asker, base, scene.asked_on)
    asker.keyboard.press("3")  # a score in progress, not submitted
    documents = []  # pages loaded from now on

    def on_request(request):
        if request.resource_type == "document":
            documents.append(request.url)

    asker.on("request", on_request)
    menu = _open_menu(asker)
    menu.get_by_label("Your question").fill(QUESTION)
    menu.get_by_role("button", name="Send to the leads").click()
    # The menu comes back with the question (closed or open: the keyboard returns to rating).
    waiting = asker.locator("#pair-thread").get_by_text("Waiting for an answer")
    waiting.wait_for(state="attached", timeout=WAIT_MS)
    menu = _open_menu(asker)
    assert waiting.is_visible() and menu.get_by_text(QUESTION).is_visible()
    assert documents == []  # sent in the background
    assert asker.locator("#rating-form input[name=overall][value='3']").is_checked()

    lead = log_in(chromium_browser, base, scene.lead)
    open_settled(lead, base + reverse("dash-pair", args=[scene.project.slug, scene.pair.pk]))
    questions = lead.locator("#questions")
    assert questions.get_by_text(QUESTION).is_visible()
    assert questions.get_by_text("their Left was response A").is_visible()
    questions.get_by_role("textbox", name="Answer").fill(ANSWER)
    questions.get_by_role("button", name="Send the answer").click()
    lead.get_by_text("Answer sent").wait_for(timeout=WAIT_MS)
    assert lead.locator("#questions").get_by_text(ANSWER).is_visible()

    _annotate(asker, base, scene.asked_on)
    summary = " ".join(asker.locator("#pair-thread summary").inner_text().split())
    assert summary.startswith("Questions (1)") and "answered" in summary
    menu = _open_menu(asker)
    assert menu.get_by_text(ANSWER).is_visible() and menu.get_by_text("A lead").is_visible()
    assert asker.console_errors == [] and lead.console_errors == []

    other = log_in(chromium_browser, base, scene.other)
    _annotate(other, base, scene.other_on)
    assert QUESTION not in other.content() and ANSWER not in other.content()
    assert other.locator("#pair-thread summary").inner_text().startswith("Ask a question")
    other.keyboard.press("2")
    other.keyboard.press("Enter")
    other.wait_for_url("**/next/", timeout=WAIT_MS)  # the only pair: nothing left
    _annotate(other, base, scene.other_on)
    menu = _open_menu(other)
    assert menu.get_by_text(QUESTION).is_visible() and menu.get_by_text(ANSWER).is_visible()
    assert menu.get_by_text("An annotator").is_visible()
    assert menu.get_by_text("their Left is your Right").is_visible()
    assert "asker" not in menu.inner_text()
    assert other.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_annotate_page_with_the_thread_open_has_no_serious_violation(
    scene, live_server, chromium_browser, viewport
):
    from annotation.services.pair_threads import question_answer, question_ask

    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=QUESTION)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body=ANSWER)
    page = log_in(chromium_browser, live_server.url, scene.asker, viewport=viewport)
    _annotate(page, live_server.url, scene.asked_on)
    menu = _open_menu(page)
    menu.get_by_text(ANSWER).wait_for(timeout=WAIT_MS)
    assert serious_violations(page) == []
    # An empty question is shown again with its error, still without a serious violation.
    menu.get_by_role("button", name="Send to the leads").click()  # `required` stops it…
    assert page.locator("#question-error").count() == 0
    page.evaluate("document.getElementById('question-body').removeAttribute('required')")
    page.locator("#question-body").fill("   ")
    menu.get_by_role("button", name="Send to the leads").click()
    page.locator("#question-error").wait_for(timeout=WAIT_MS)  # …and the server too
    assert serious_violations(page) == []
    body = page.locator("#pair-thread .menu-body").bounding_box()
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
    assert body["x"] >= 0 and body["x"] + body["width"] <= inner_width, body
    assert scroll_width <= inner_width
    # The browser logs the 422 that answered the empty question; nothing else went wrong.
    assert [e for e in page.console_errors if "422" not in e] == []


def test_a_question_past_the_limit_is_refused_in_place_and_the_rating_in_progress_stays(
    scene, live_server, chromium_browser
):
    from annotation.models import PairMessage
    from annotation.services.pair_threads import question_ask
    from core.rate_limits import LIMITS

    allowed = LIMITS["question.ask"].count
    for n in range(allowed):
        question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=f"Q{n}")
    page = log_in(chromium_browser, live_server.url, scene.asker)
    _annotate(page, live_server.url, scene.asked_on)
    page.keyboard.press("3")
    documents = []
    page.on("request", lambda r: documents.append(r.url) if r.resource_type == "document" else 0)
    menu = _open_menu(page)
    page.locator("#question-body").fill(QUESTION)
    menu.get_by_role("button", name="Send to the leads").click()
    refusal = page.locator("#pair-thread").get_by_text("Too many requests in a short time")
    refusal.wait_for(timeout=WAIT_MS)
    assert documents == []  # the page stayed: no form posted in its place
    assert page.locator("#rating-form input[name=overall][value='3']").is_checked()
    assert page.locator("#question-body").input_value() == QUESTION
    assert PairMessage.objects.count() == allowed
