"""The lead's member tools in Chromium, on the demo's data: at 1366×768, 390×844 and 360×740
the members page never scrolls sideways and axe finds nothing serious; the lead adds an
existing account by name, sets a quota and releases a pair in progress, each from the page."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from demo.seed import LEAD, demo_seed
from projects.models import Membership, Project
from tests.axe import serious_violations
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

SMALL_PHONE = {"width": 360, "height": 740}
PAGE_WIDTH = "() => [document.documentElement.scrollWidth, document.documentElement.clientWidth]"


@pytest.fixture
def demo(tasks_in_process):
    demo_seed(pairs_per_task=3)
    project = Project.objects.get(slug="demo")
    held = assignment_claim(
        User.objects.get(username="annotator2"), project.tasks.order_by("slug")[0]
    )
    User.objects.create_user("newcomer", email="newcomer@example.org", password="x-unused-1")
    return project, User.objects.get(username=LEAD), held


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE, SMALL_PHONE], ids=["1366", "390", "360"])
def test_the_members_page_reads_whole_at_every_width(demo, live_server, chromium_browser, viewport):
    project, lead, held = demo
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    open_settled(page, live_server.url + reverse("project-members", args=[project.slug]))
    assert page.get_by_role("heading", name="Pairs in progress").count() == 1
    assert page.get_by_role("heading", name="Add an existing account").count() == 1
    scroll, client = page.evaluate(PAGE_WIDTH)
    assert scroll <= client, (viewport, scroll, client)
    assert serious_violations(page) == []
    assert page.console_errors == []


def test_the_lead_adds_sets_a_quota_and_releases_from_the_page(demo, live_server, chromium_browser):
    project, lead, held = demo
    page = log_in(chromium_browser, live_server.url, lead, viewport=DESKTOP)
    open_settled(page, live_server.url + reverse("project-members", args=[project.slug]))

    page.fill("#add-member input[name=add-identifier]", "newcomer@example.org")
    page.click("#add-member button[type=submit]")
    settled(page)
    assert "it is now a member of" in page.inner_text(".messages, main")
    assert Membership.objects.filter(project=project, user__username="newcomer").exists()

    row = page.locator("tr", has=page.locator("a", has_text="newcomer"))
    row.locator("input[name=project_quota]").fill("5")
    row.get_by_role("button", name="Save").click()
    settled(page)
    assert Membership.objects.get(project=project, user__username="newcomer").project_quota == 5

    page.get_by_role("button", name="Release from annotator2").click()
    settled(page)
    assert "is back in the pool" in page.inner_text("main")
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    assert page.console_errors == []
