"""The API tokens page in Chromium, at 1366 and 390 px: making a token shows its key once with
a Copy button, the list shows it, revoking it ends it; no axe violation and nothing wider
than the screen at either size."""

import pytest
from django.urls import reverse

from projects.models import ApiToken, Membership
from tests.axe import violations
from tests.factories import member, queued_pairs
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_a_token_is_made_shown_once_listed_and_revoked(
    tmp_path, live_server, chromium_browser, viewport
):
    project = queued_pairs(tmp_path, project_slug="alpha", count=1).project
    lead = member("lead", project, role=Membership.Role.LEAD)
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    if viewport == PHONE:  # the account links fold into the header's menu
        page.locator(".account-menu > summary").click()
    page.get_by_role("link", name="API tokens").click()
    settled(page)
    assert violations(page) == []
    page.fill("input[name=name]", "nightly export")
    page.fill("input[name=days]", "7")
    page.get_by_label("Read-only").check()
    page.select_option("select[name=project]", str(project.pk))
    page.get_by_role("button", name="Create the token").click()
    settled(page)
    key = page.locator("#new-token-key").input_value()
    token = ApiToken.objects.get()
    assert key.startswith(token.prefix) and token.read_only and token.project_id == project.pk
    assert page.get_by_role("button", name="Copy").is_visible()
    assert page.get_by_role("cell", name="nightly export", exact=True).is_visible()
    assert violations(page) == []
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= inner_width + 1
    open_settled(page, live_server.url + reverse("api-tokens"))
    assert page.locator("#new-token-key").count() == 0  # shown once
    page.get_by_role("button", name="Revoke “nightly export”").click()
    settled(page)
    token.refresh_from_db()
    assert token.revoked_at is not None
    assert page.get_by_role("region", name="Ended tokens").is_visible()
    assert violations(page) == []
    scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
    assert scroll_width <= inner_width + 1
    assert page.console_errors == []
