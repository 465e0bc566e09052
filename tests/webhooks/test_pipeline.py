"""Where deliveries come from and when they leave: an adjudication's decision becomes a
delivery; the POST is made in the background, never inside the request that caused it; the
page's queries do not grow with the deliveries it lists."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone

from annotation.services.adjudication import pair_adjudicate
from content.models import Pair
from core import outbox
from projects.events import publish
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db


def subscribe(site, kinds):
    return Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=kinds
    )


def test_a_decision_by_adjudication_is_delivered(site, receiver, fire):
    subscribe(site, ["pair.decided"])
    pair = Pair.objects.filter(task=site.task).order_by("pk").first()
    with fire():
        pair_adjudicate(pair.pk, site.lead, "keep_b", "A hides a watermark")
    (request,) = receiver.requests
    assert request["signed"]
    assert request["json"]["event"] == "pair.decided"
    assert request["json"]["data"]["pair"] == pair.pk
    assert request["json"]["data"]["by"] == "adjudication"


def test_the_post_is_made_after_the_request_not_inside_it(
    site, receiver, client, fire, monkeypatch
):
    subscription = subscribe(site, ["export.ready"])
    now = timezone.now()
    delivery = Delivery.objects.create(
        subscription=subscription,
        kind="export.ready",
        payload={"event": "export.ready", "project": site.project.slug, "data": {}},
        status="failed",
        created_at=now,
    )
    waiting = []
    monkeypatch.setattr(outbox, "_thread_start", lambda work, *args: waiting.append((work, args)))
    client.login(username=site.lead.username, password="pw-annotate-1")
    resend = reverse("webhook-delivery-resend", args=[site.project.slug, delivery.pk])
    with fire():
        assert client.post(resend).status_code == 302
    assert receiver.requests == [] and len(waiting) == 1  # the answer came first
    work, args = waiting.pop()
    work(*args)
    copy = Delivery.objects.exclude(pk=delivery.pk).get()
    assert [request["json"]["delivery"] for request in receiver.requests] == [copy.pk]


def test_the_page_queries_do_not_grow_with_the_deliveries(site, client, fire):
    subscribe(site, ["pair.decided"])
    client.login(username=site.lead.username, password="pw-annotate-1")
    url = reverse("project-webhooks", args=[site.project.slug])

    def queries() -> int:
        with CaptureQueriesContext(connection) as captured:
            assert client.get(url).status_code == 200
        return len(captured)

    with fire():
        publish(site.project, "pair.decided", {"pair": 1})
    few = queries()
    with fire():
        for pair in range(20):
            publish(site.project, "pair.decided", {"pair": pair})
    assert Delivery.objects.count() == 21
    assert queries() == few
