"""The annotator's list of their ratings in Chromium, on the demo's data: at 1366×768, 390×844
and 360×740 the page never scrolls sideways (a long prompt wraps or the table scrolls in its
own region), axe finds nothing serious, Reopen opens the annotate page."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from demo.seed import demo_seed
from projects.models import Project
from tests.axe import serious_violations
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SMALL_PHONE = {"width": 360, "height": 740}
PAGE_WIDTH = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


@pytest.fixture
def annotator(tasks_in_process):
    demo_seed(pairs_per_task=3)
    user = User.objects.get(username="annotator1")
    project = Project.objects.get(slug="demo")
    for task in project.tasks.order_by("slug")[:2]:  # a rating that can still be corrected
        assignment = assignment_claim(user, task)
        if assignment is not None:
            rating_submit(assignment.pk, user, RatingInput(overall=3))
    return user


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE, SMALL_PHONE], ids=["1366", "390", "360"])
def test_the_list_reads_whole_at_every_width(annotator, live_server, chromium_browser, viewport):
    page = log_in(chromium_browser, live_server.url, annotator, viewport=viewport)
    open_settled(page, live_server.url + reverse("own-work", args=["demo"]))
    page.get_by_role("link", name="Every pair you rated").click()
    settled(page)
    assert page.url == live_server.url + reverse("own-ratings", args=["demo"])
    rows = page.locator(".own-ratings tbody tr")
    assert rows.count() >= 2
    scroll, client = page.evaluate(PAGE_WIDTH)
    assert scroll <= client, (viewport, scroll, client)
    assert serious_violations(page) == []
    page.get_by_role("link", name="Reopen").first.click()
    settled(page)
    assert "/annotate/" in page.url
    assert page.console_errors == []
