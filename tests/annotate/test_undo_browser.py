"""Undo on the annotate page, in Debian's Chromium through Playwright at 1366×768:
a skipped pair comes back with Undo, in place, without a reload; a rating reopened from Recent
ratings has a way back to the current pair."""

import pytest
from django.urls import reverse

from annotation.models import Assignment, Flag
from tests.annotate.test_browser import (
    WAIT_MS,
    log_in_and_start,
    path_of,
    shown_assignment,
    wait_for_next_pair,
)
from tests.axe import serious_violations

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_undo_brings_the_skipped_pair_back_and_the_correction_page_leads_back(
    live_server, browser_page, expert
):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    first = log_in_and_start(page, live_server.url)
    page.evaluate("window.__marker = 1")
    prompt = page.inner_text("#workspace .prompt")

    page.keyboard.press("s")
    page.keyboard.press("Enter")  # the first preset reason
    second = wait_for_next_pair(page, first)
    assert page.inner_text("#workspace .position").startswith("Pair 2 of ")
    assert serious_violations(page) == []  # the feedback line and its Undo form

    page.get_by_role("button", name="Undo").click()
    back = wait_for_next_pair(page, second)

    assert back == first  # the same pair again, at its place
    assert page.inner_text("#workspace .prompt") == prompt
    assert page.inner_text("#workspace .position").startswith("Pair 1 of ")
    assert path_of(page.url) == reverse("annotate", args=[first])
    assert page.evaluate("window.__marker") == 1, "the page was reloaded"
    assert page.text_content("#workspace .toast").strip() == (
        "Undone: the pair is yours to rate again."
    )
    assert page.get_by_role("button", name="Undo").count() == 0
    assert Assignment.objects.get(pk=first).status == Assignment.Status.LEASED

    # The pair is rated as usual; then the pair claimed after the skip is next.
    page.keyboard.press("3")
    page.keyboard.press("Enter")
    assert wait_for_next_pair(page, first) == second

    # A rating reopened from Recent ratings leads back to the current pair.
    page.click(".recent > summary")
    page.locator(".recent li a").first.click()
    page.wait_for_url(f"**{reverse('annotate', args=[first])}?from={second}", timeout=WAIT_MS)
    assert page.is_checked("#rating-form input[name=overall][value='3']")
    page.get_by_role("link", name="Back to the current pair").click()
    page.wait_for_url(f"**{reverse('annotate', args=[second])}", timeout=WAIT_MS)
    assert shown_assignment(page) == second
    assert page.console_errors == []


def test_u_takes_back_a_flag_and_the_flagged_pair_is_shown_again(live_server, browser_page, expert):
    page = browser_page
    page.set_viewport_size({"width": 1366, "height": 768})
    first = log_in_and_start(page, live_server.url)
    page.keyboard.press("f")
    page.keyboard.press("Enter")  # the first reason
    second = wait_for_next_pair(page, first)
    assert Flag.objects.filter(assignment_id=first).exists()
    assert "Flagged by mistake?" in page.inner_text("#workspace .ws-feedback")

    page.keyboard.press("u")

    assert wait_for_next_pair(page, second) == first
    assert not Flag.objects.filter(assignment_id=first).exists()
    assert Assignment.objects.get(pk=first).status == Assignment.Status.LEASED
    page.keyboard.press("u")  # nothing offered now: the key does nothing
    page.keyboard.press("6")
    page.keyboard.press("Enter")
    assert wait_for_next_pair(page, first) == second
    assert page.console_errors == []
