"""In Chromium: a lead opens an annotator from the agreement page, reads their figures and
re-admits them; axe finds nothing on the page at 1366 px nor at 390 px, where the page is no
wider than the phone's screen."""

import re

import pytest
from django.urls import reverse

from annotation.models import AnnotatorPause
from projects.models import Task
from tests.axe import violations
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


def test_a_lead_opens_an_annotator_from_the_agreement_page(experts, live_server, chromium_browser):
    project, lead, users = experts
    xavier = users["xavier"]
    AnnotatorPause.objects.create(
        task=Task.objects.get(project=project), annotator=xavier, reason="0 of 1 gold checks right"
    )
    page = log_in(chromium_browser, live_server.url, lead, viewport=DESKTOP)
    open_settled(page, live_server.url + reverse("dash-agreement", args=[project.slug]))
    table = page.get_by_role("region", name="Annotators", exact=True)
    table.get_by_role("link", name="xavier", exact=True).click()
    url = live_server.url + reverse("dash-annotator", args=[project.slug, xavier.pk])
    page.wait_for_url(url, timeout=WAIT_MS)
    settled(page)
    assert page.get_by_role("heading", level=1).inner_text() == f"{project.name}: xavier"
    agreement = page.get_by_role("region", name="Agreement with the other experts", exact=True)
    assert "0.333 [0.061, 0.792]" in agreement.inner_text()
    assert violations(page) == [], violations(page)

    # A rating's pair opens from the list.
    ratings = page.get_by_role("region", name="Ratings", exact=True)
    ratings.get_by_role("link", name=re.compile(r"^t2i-0-")).click()
    page.wait_for_url(re.compile(r"/pairs/\d+/$"), timeout=WAIT_MS)
    page.go_back()
    page.wait_for_url(url, timeout=WAIT_MS)

    # Re-admitted from the page, the lead lands back on it.
    page.get_by_role("button", name="Re-admit to t2i").click()
    page.wait_for_url(url + "#quality", timeout=WAIT_MS)
    assert page.get_by_text("Re-admitted: the annotator's queue is open again.").is_visible()
    assert page.get_by_role("button", name="Re-admit to t2i").count() == 0
    assert page.console_errors == []


def test_the_page_fits_a_phone_with_no_violation(experts, live_server, chromium_browser):
    project, lead, users = experts
    page = log_in(chromium_browser, live_server.url, lead, viewport=PHONE)
    open_settled(
        page, live_server.url + reverse("dash-annotator", args=[project.slug, users["xavier"].pk])
    )
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= inner_width + 1
    assert violations(page) == [], violations(page)
    assert page.console_errors == []
