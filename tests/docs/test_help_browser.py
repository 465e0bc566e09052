"""The help pages in Chromium: reachable from the header's Help link, readable at 1366 px and on
a phone (no sideways scroll of the page: wide tables scroll inside their box), in either theme,
with no accessibility violation and no console error."""

import pytest
from django.urls import reverse

from projects.models import Project
from tests.axe import violations
from tests.factories import member
from tests.pages.browsing import DESKTOP, PHONE, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
@pytest.mark.parametrize("theme", ["light", "dark"])
def test_the_guides_read_well_and_accessibly(live_server, chromium_browser, viewport, theme):
    lead = member("boss", Project.objects.create(slug="p", name="P"), role="lead")
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    page.evaluate("theme => localStorage.setItem('arbiter.theme', theme)", theme)
    if viewport is PHONE:
        page.locator(".account-menu > summary").click()
    page.get_by_role("link", name="Help", exact=True).click()
    page.wait_for_url(live_server.url + reverse("help"))
    for name in ("experts", "leads", "judges"):
        open_settled(page, live_server.url + reverse("help-page", args=[name]))
        assert page.locator("article.help-page h1").is_visible(), name
        assert violations(page) == [], name
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
        assert scroll_width <= inner_width + 1, name
    assert page.console_errors == []
