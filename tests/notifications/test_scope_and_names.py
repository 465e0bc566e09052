"""A notification speaks of what its reader knows and lasts as long as their role: a pair is
named by its task and its prompt's first words, never by an internal id an annotator never
sees; a lead removed from the project (or no longer its lead) no longer lists, counts or
opens its notifications; and marking read is limited like every repeated post."""

import re

import pytest
from django.core import mail
from django.urls import reverse

from annotation.services.assignments import assignment_claim
from annotation.services.pair_threads import question_answer, question_ask
from content.rendering import content_summary
from notifications.models import Notification
from projects.models import Membership

pytestmark = pytest.mark.django_db


def _list(client, user) -> str:
    client.force_login(user)
    return client.get(reverse("notifications")).content.decode()


def _bell(client, user) -> str:
    client.force_login(user)
    return client.get(reverse("home")).content.decode()


def _talk(site, fire):
    with fire():
        assignment = assignment_claim(site.ann, site.task)
        asked = question_ask(assignment_id=assignment.pk, user=site.ann, body="Cropped?")
    with fire():
        question_answer(thread_id=asked.thread_id, lead=site.lead, body="Yes.")
    pair = assignment.pair
    return pair, content_summary(pair.prompt.content, limit=60)


def test_a_question_and_its_answer_name_the_task_and_the_prompt(client, site, fire):
    pair, prompt = _talk(site, fire)
    task = site.task.name
    lead_page = _list(client, site.colead)
    assert f"An annotator asked a question about the pair “{prompt}” in task {task}." in lead_page
    annotator_page = _list(client, site.ann)
    assert f"A lead answered your question about the pair “{prompt}” in task {task}." in (
        annotator_page
    )
    for page in (lead_page, annotator_page):
        assert f"pair {pair.pk}" not in page


def test_the_mail_names_the_prompt_too(client, site, fire, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    site.ann.email = "ann@example.org"
    site.ann.save(update_fields=["email"])
    pair, prompt = _talk(site, fire)
    (message,) = [m for m in mail.outbox if m.to == ["ann@example.org"]]
    assert f"about the pair “{prompt}”" in message.body
    assert f"pair {pair.pk}" not in message.body and f"pair {pair.pk}" not in message.subject


def test_a_lead_removed_from_the_project_no_longer_reads_its_notifications(client, site, fire):
    _talk(site, fire)
    (asked,) = Notification.objects.filter(recipient=site.colead, kind="question.asked")
    assert "asked a question" in _list(client, site.colead)
    assert 'aria-label="Notifications, 1 unread"' in _bell(client, site.colead)

    membership = Membership.objects.get(user=site.colead, project=site.project)
    membership.delete()
    assert "asked a question" not in _list(client, site.colead)
    assert 'aria-label="Notifications, 0 unread"' in _bell(client, site.colead)
    read = reverse("notification-read", args=[asked.pk])
    missing = reverse("notification-read", args=[asked.pk + 1000])
    assert client.post(read).status_code == client.post(missing).status_code == 404
    client.post(reverse("notifications-read-all"))
    asked.refresh_from_db()
    assert asked.read_at is None  # not theirs to mark any more

    Membership.objects.create(user=site.colead, project=site.project, role="lead")
    assert "asked a question" in _list(client, site.colead)


def test_a_lead_made_annotator_keeps_only_what_is_about_themselves(client, site, fire):
    with fire():
        assignment = assignment_claim(site.colead, site.task)
        asked = question_ask(assignment_id=assignment.pk, user=site.colead, body="Mine?")
        assignment_ann = assignment_claim(site.ann, site.task)
        question_ask(assignment_id=assignment_ann.pk, user=site.ann, body="Theirs?")
    with fire():
        question_answer(thread_id=asked.thread_id, lead=site.lead, body="Yes.")
    assert "An annotator asked" in _list(client, site.colead)

    Membership.objects.filter(user=site.colead, project=site.project).update(role="annotator")
    page = _list(client, site.colead)
    assert "An annotator asked" not in page  # the leads' news is no longer theirs
    assert "A lead answered your question" in page
    assert 'aria-label="Notifications, 1 unread"' in _bell(client, site.colead)


def test_marking_read_is_limited(client, site, settings):
    settings.ARBITER_RATE_LIMITS = {"notification.post": [3, 60]}
    note = Notification.objects.create(
        recipient=site.lead, project=site.project, kind="export.ready", data={"job": 1}
    )
    client.force_login(site.lead)
    posts = [client.post(reverse("notifications-read-all")).status_code for _ in range(3)]
    refused = client.post(reverse("notification-read", args=[note.pk]))
    assert posts == [302, 302, 302] and refused.status_code == 429
    assert 'href="/notifications/"' in refused.content.decode()
    settings_post = client.post(reverse("notification-settings"), {})
    assert settings_post.status_code == 429


def test_naming_the_pairs_costs_one_query_for_3_or_60(client, site, django_assert_num_queries):
    pairs = list(site.task.pairs.order_by("pk"))
    client.force_login(site.lead)
    for count in (3, 60):
        Notification.objects.all().delete()
        Notification.objects.bulk_create(
            Notification(
                recipient=site.lead, project=site.project, kind="question.asked",
                data={"pair": pairs[n % len(pairs)].pk, "thread": n, "message": n},
            )
            for n in range(count)
        )  # fmt: skip
        # session, user, the rows with their project, the pairs' names, the bell, the account menu
        with django_assert_num_queries(6):
            page = client.get(reverse("notifications")).content.decode()
        shown = re.findall(r"asked a question about the pair “[^”<]+” in task [^<]+\.</a>", page)
        assert len(shown) == count
