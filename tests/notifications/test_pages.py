"""The bell and the list: a user sees, counts and marks only their own notifications; another
user's id is missing (404), marking is POST only, and the bell costs one query a page."""

import pytest
from django.urls import reverse

from notifications.models import Notification

pytestmark = pytest.mark.django_db


def notify(user, project, kind="export.ready", **data):
    return Notification.objects.create(
        recipient=user, project=project, kind=kind, data={"job": 3, "pairs": 5, **data}
    )


def test_the_bell_counts_the_users_unread_notifications(client, site):
    notify(site.lead, site.project)
    notify(site.lead, site.project, kind="flag.raised", pair=1)
    notify(site.colead, site.project)  # someone else's
    client.force_login(site.lead)
    page = client.get(reverse("home")).content.decode()
    assert 'aria-label="Notifications, 2 unread"' in page
    assert '<span class="badge">2</span>' in page


def test_the_bell_costs_one_query_whatever_the_number(client, site, django_assert_num_queries):
    client.force_login(site.lead)
    client.get(reverse("notification-settings"))  # the session is warm
    notify(site.lead, site.project)
    # session, user, the page's two (a lead anywhere? the preferences), and the bell
    with django_assert_num_queries(5):
        client.get(reverse("notification-settings"))
    for _ in range(30):
        notify(site.lead, site.project)
    with django_assert_num_queries(5):
        page = client.get(reverse("notification-settings")).content.decode()
    assert "Notifications, 31 unread" in page


def test_the_list_shows_the_users_own_notifications_with_links(client, site):
    notify(site.lead, site.project)
    notify(site.colead, site.project, job=99)
    client.force_login(site.lead)
    page = client.get(reverse("notifications")).content.decode()
    assert "Export #3 (5 pairs) is ready to download." in page
    assert 'href="/projects/ann/exports/"' in page
    assert "Export #99" not in page


def test_marking_read_is_post_only_and_counts_down(client, site):
    first = notify(site.lead, site.project)
    notify(site.lead, site.project)
    client.force_login(site.lead)
    url = reverse("notification-read", args=[first.pk])
    assert client.get(url).status_code == 405
    assert client.post(url).status_code == 302
    assert 'aria-label="Notifications, 1 unread"' in client.get(reverse("home")).content.decode()
    assert client.get(reverse("notifications-read-all")).status_code == 405
    client.post(reverse("notifications-read-all"))
    assert not Notification.objects.filter(recipient=site.lead, read_at__isnull=True).exists()


def test_another_users_notification_answers_like_a_missing_one(client, site):
    theirs = notify(site.outsider, site.project)
    client.force_login(site.lead)
    assert client.post(reverse("notification-read", args=[theirs.pk])).status_code == 404
    assert client.post(reverse("notification-read", args=[theirs.pk + 100])).status_code == 404
    client.post(reverse("notifications-read-all"))
    theirs.refresh_from_db()
    assert theirs.read_at is None


def test_the_paused_annotator_is_spoken_to_and_names_are_escaped(client, site):
    notify(site.ann, site.project, kind="annotator.paused", annotator=site.ann.pk, task="t2i")
    notify(
        site.lead, site.project, kind="annotator.paused", annotator=site.ann.pk,
        username="<b>ann</b>", task="t2i",
    )  # fmt: skip
    client.force_login(site.ann)
    assert "You are paused in task t2i" in client.get(reverse("notifications")).content.decode()
    client.force_login(site.lead)
    page = client.get(reverse("notifications")).content.decode()
    assert "&lt;b&gt;ann&lt;/b&gt; was paused" in page and "<b>ann</b>" not in page


def test_the_pages_need_a_sign_in(client):
    for name in ("notifications", "notification-settings"):
        assert client.get(reverse(name)).status_code == 302
    assert client.post(reverse("notifications-read-all")).status_code == 302


def test_the_list_costs_the_same_queries_for_3_or_60(client, site, django_assert_num_queries):
    client.force_login(site.lead)
    for count in (3, 60):
        Notification.objects.all().delete()
        for job in range(count):
            notify(site.lead, site.project, job=job)
        # session, user, the rows with their project, the bell, the account menu (a lead anywhere?)
        with django_assert_num_queries(5):
            page = client.get(reverse("notifications")).content.decode()
        assert page.count("is ready to download.</a>") == count
