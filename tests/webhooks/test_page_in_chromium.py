"""The webhooks page in Chromium: a lead subscribes the project to decided pairs, sees the
delivery arrive and re-sends it; axe finds nothing at 1366 px nor at 390 px, where the page
fits the screen."""

import pytest
from django.urls import reverse

from projects.events import publish
from tests.axe import violations
from tests.pages.browsing import PHONE, log_in, open_settled
from tests.settling import settled
from webhooks.models import Delivery, Subscription

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def test_a_lead_subscribes_and_re_sends_a_delivery(site, receiver, live_server, chromium_browser):
    page = log_in(chromium_browser, live_server.url, site.lead)
    open_settled(page, live_server.url + reverse("project-settings", args=[site.project.slug]))
    page.get_by_role("link", name="Webhooks").click()
    settled(page)
    page.get_by_label("Destination").select_option(label="pipeline")
    page.get_by_label("A pair was decided").check()
    page.get_by_role("button", name="Save the subscription").click()
    settled(page)
    assert page.get_by_text("Subscription saved.").is_visible()
    assert Subscription.objects.get().kinds == ["pair.decided"]

    publish(site.project, "pair.decided", {"pair": 1})  # committed: sent at once
    delivery = Delivery.objects.get()
    page.reload()
    settled(page)
    row = page.locator(f"#delivery-{delivery.pk}")
    assert "Delivered" in row.inner_text() and "HTTP 200" in row.inner_text()
    assert violations(page) == []

    page.get_by_role("button", name=f"Re-send delivery {delivery.pk}").click()
    settled(page)
    assert page.get_by_text(f"Delivery {delivery.pk} re-sent").is_visible()
    assert [request["signed"] for request in receiver.requests] == [True, True]

    page.set_viewport_size(PHONE)
    page.reload()
    settled(page)  # without the message (_messages.html: its own)
    assert violations(page) == []
    assert page.evaluate("document.documentElement.scrollWidth <= window.innerWidth")
    assert page.console_errors == []
