"""A lead subscribes their project to events at a destination the operator allowed for it,
sees the deliveries and re-sends one. A lead never makes a destination: a URL posted to the
page changes nothing and nothing is ever sent to it (the attack, with a second receiver that
must receive nothing); another project's lead reaches nothing of this project (404)."""

import pytest
from django.core.management import call_command
from django.core.management.base import CommandError
from django.urls import reverse

from projects.events import publish
from webhooks.models import Delivery, Destination, Subscription

pytestmark = pytest.mark.django_db

PASSWORD = "pw-annotate-1"


def page(site):
    return reverse("project-webhooks", args=[site.project.slug])


def signed_in(client, user):
    client.login(username=user.username, password=PASSWORD)
    return client


def test_a_lead_subscribes_to_an_allowed_destination_and_events_arrive(
    site, client, receiver, fire
):
    signed_in(client, site.lead)
    shown = client.get(page(site))
    assert shown.status_code == 200
    assert b"pipeline" in shown.content
    assert receiver.url.encode() not in shown.content  # the operator's URL is not shown

    answer = client.post(
        page(site), {"destination": site.destination.pk, "kinds": ["pair.decided", "run.finished"]}
    )
    assert answer.status_code == 302
    assert Subscription.objects.get().kinds == ["pair.decided", "run.finished"]
    with fire():
        publish(site.project, "pair.decided", {"pair": 1})
    assert [request["signed"] for request in receiver.requests] == [True]
    listed = client.get(page(site))
    assert b"Delivered" in listed.content and b"HTTP 200" in listed.content


def test_a_url_posted_by_a_lead_is_never_a_destination(site, client, receiver, attacker, fire):
    signed_in(client, site.lead)
    forged = {
        "destination": site.destination.pk,
        "kinds": ["pair.decided"],
        "url": attacker.url,
        "destination_url": attacker.url,
        "secret_env": "SECRET_KEY",
    }
    assert client.post(page(site), forged).status_code == 302
    assert client.post(page(site), {**forged, "destination": attacker.url}).status_code == 404
    assert client.post(page(site), {**forged, "destination": ""}).status_code == 404
    # Nor through the operator's admin, which a lead cannot use.
    admin_add = client.post(
        reverse("admin:webhooks_destination_add"),
        {"name": "mine", "url": attacker.url, "secret_env": "X", "all_projects": "on"},
    )
    assert admin_add.status_code in (302, 403)
    assert list(Destination.objects.values_list("url", flat=True)) == [receiver.url]

    with fire():
        publish(site.project, "pair.decided", {"pair": 1})
    assert attacker.requests == []
    assert len(receiver.requests) == 1


def test_only_destinations_allowed_for_the_project_can_be_chosen(site, client, attacker, fire):
    elsewhere = Destination.objects.create(
        name="elsewhere", url=attacker.url, secret_env="ARBITER_TEST_WEBHOOK_SECRET"
    )
    elsewhere.projects.set([site.other])
    signed_in(client, site.lead)
    assert b"elsewhere" not in client.get(page(site)).content
    answer = client.post(page(site), {"destination": elsewhere.pk, "kinds": ["pair.decided"]})
    assert answer.status_code == 404
    assert not Subscription.objects.exists()
    with fire():
        publish(site.project, "pair.decided", {"pair": 1})
    assert attacker.requests == []


def test_an_unknown_kind_is_refused(site, client):
    signed_in(client, site.lead)
    answer = client.post(page(site), {"destination": site.destination.pk, "kinds": ["rating.x"]})
    assert answer.status_code == 400 and not Subscription.objects.exists()


def test_a_lead_re_sends_a_delivery(site, client, receiver, fire):
    subscription = Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["export.ready"]
    )
    with fire():
        publish(site.project, "export.ready", {"export": 3})
    original = Delivery.objects.get()
    signed_in(client, site.lead)
    resend = reverse("webhook-delivery-resend", args=[site.project.slug, original.pk])
    with fire():
        assert client.post(resend).status_code == 302
    copy = Delivery.objects.exclude(pk=original.pk).get()
    assert (copy.subscription, copy.payload, copy.status) == (
        subscription,
        original.payload,
        "delivered",
    )
    assert [request["json"]["delivery"] for request in receiver.requests] == [
        original.pk,
        copy.pk,
    ]
    assert client.get(resend).status_code == 405


def test_another_projects_lead_reaches_nothing_of_this_project(site, client, receiver, fire):
    subscription = Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["pair.decided"]
    )
    with fire():
        publish(site.project, "pair.decided", {"pair": 1})
    delivery = Delivery.objects.get()
    signed_in(client, site.outsider)
    assert client.get(page(site)).status_code == 404
    for slug in (site.project.slug, site.other.slug):
        resend = reverse("webhook-delivery-resend", args=[slug, delivery.pk])
        assert client.post(resend).status_code == 404
        remove = reverse("webhook-subscription-remove", args=[slug, subscription.pk])
        assert client.post(remove).status_code == 404
    own = reverse("project-webhooks", args=[site.other.slug])
    answer = client.post(own, {"destination": site.destination.pk, "kinds": ["pair.decided"]})
    assert answer.status_code == 404
    assert Subscription.objects.filter(project=site.other).count() == 0
    assert Delivery.objects.count() == 1 and len(receiver.requests) == 1
    assert Subscription.objects.filter(pk=subscription.pk).exists()


def test_an_annotator_cannot_open_the_page(site, client):
    signed_in(client, site.ann)
    assert client.get(page(site)).status_code == 403


def test_a_lead_removes_a_subscription(site, client):
    subscription = Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["pair.decided"]
    )
    signed_in(client, site.lead)
    remove = reverse("webhook-subscription-remove", args=[site.project.slug, subscription.pk])
    assert client.post(remove).status_code == 302
    assert not Subscription.objects.exists()


def test_the_settings_page_links_to_the_webhooks_page(site, client):
    signed_in(client, site.lead)
    settings_page = client.get(reverse("project-settings", args=[site.project.slug]))
    assert page(site).encode() in settings_page.content


def test_the_operator_adds_a_destination_from_the_command_line(site, capsys):
    call_command(
        "webhook_destination_add",
        "ci",
        "--url",
        "https://ci.example.org/hooks",
        "--secret-env",
        "CI_HOOK_SECRET",
        "--projects",
        site.project.slug,
    )
    ci = Destination.objects.get(name="ci")
    assert (ci.url, ci.secret_env, list(ci.projects.all())) == (
        "https://ci.example.org/hooks",
        "CI_HOOK_SECRET",
        [site.project],
    )
    assert "usable by" in capsys.readouterr().out
    with pytest.raises(CommandError, match="Arbiter's own secret"):
        call_command("webhook_destination_add", "ci", "--secret-env", "SECRET_KEY")
    with pytest.raises(CommandError, match="http"):
        call_command("webhook_destination_add", "ci", "--url", "ftp://example.org/")
    with pytest.raises(CommandError, match="needs a URL"):
        call_command("webhook_destination_add", "new-one", "--all-projects")


def test_the_page_carries_the_project_tabs(site, client):
    from tests.pages.test_navigation import TABS, tab_words

    signed_in(client, site.lead)
    assert set(TABS) <= set(tab_words(client.get(page(site)).content.decode()))
