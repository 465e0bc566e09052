"""A lead's posts on the webhooks page at a person's pace: ten re-sends in a second reach the
operator's receiver five times; the rest answer 429, record no delivery and post nothing.
Subscription changes are limited the same way."""

import pytest
from django.urls import reverse

from core.rate_limits import LIMITS
from projects.events import publish
from tests.factories import member
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db


def test_ten_re_sends_in_a_second_post_five_times(site, client, receiver, fire):
    Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["pair.decided"]
    )
    with fire():
        publish(site.project, "pair.decided", {"pair": 7})
    original = Delivery.objects.get()
    client.force_login(site.lead)
    url = reverse("webhook-delivery-resend", args=[site.project.slug, original.pk])
    with fire():
        answers = [client.post(url) for _ in range(10)]

    allowed = LIMITS["webhook.resend"].count
    assert [a.status_code for a in answers] == [302] * allowed + [429] * (10 - allowed)
    assert len(receiver.requests) == 1 + allowed
    assert Delivery.objects.count() == 1 + allowed
    refused = answers[-1]
    assert int(refused["Retry-After"]) <= LIMITS["webhook.resend"].seconds
    page = refused.content.decode()
    assert "Too many requests in a short time; nothing was sent." in page
    assert f'href="/projects/{site.project.slug}/settings/webhooks/#deliveries"' in page

    # The project's own count is twice a lead's: a second lead re-sends too, up to it.
    colead = member("colead", site.project, role="lead")
    client.force_login(colead)
    with fire():
        answers = [client.post(url) for _ in range(allowed)]
    assert [a.status_code for a in answers] == [302] * allowed
    third = member("third", site.project, role="lead")
    client.force_login(third)
    with fire():
        assert client.post(url).status_code == 429
    assert len(receiver.requests) == 1 + 2 * allowed


def test_subscription_changes_are_limited(site, client):
    client.force_login(site.lead)
    url = reverse("project-webhooks", args=[site.project.slug])
    form = {"destination": site.destination.pk, "kinds": ["pair.decided"]}
    allowed = LIMITS["webhook.subscription"].count
    answers = [client.post(url, form).status_code for _ in range(allowed + 1)]
    assert answers == [302] * allowed + [429]
    subscription = Subscription.objects.get()
    remove = reverse("webhook-subscription-remove", args=[site.project.slug, subscription.pk])
    assert client.post(remove).status_code == 429
    assert Subscription.objects.filter(pk=subscription.pk).exists()
