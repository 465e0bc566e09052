"""Each user chooses what they are told, in the list and by e-mail; e-mail leaves only where
the operator set up mail (EMAIL_HOST), as text, with a link to the page."""

import pytest
from django.conf import global_settings
from django.core import mail
from django.urls import reverse

from annotation.services.assignments import assignment_claim, assignment_flag
from exports.jobs import export_job_start
from notifications.models import Notification, NotificationPreference

pytestmark = pytest.mark.django_db


@pytest.fixture
def mailed(site, settings):
    """The server sends mail (Django's memory backend), and both leads have an address."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.ARBITER_BASE_URL = "https://arbiter.example.org/"
    for user in (site.lead, site.colead, site.ann):
        user.email = f"{user.username}@example.org"
        user.save(update_fields=["email"])
    return site


def test_a_ready_export_is_mailed_as_text_with_its_link(mailed, exportable, fire):
    with fire():
        job = export_job_start(mailed.project, mailed.lead)
    assert sorted(message.to[0] for message in mail.outbox) == [
        "boss@example.org",
        "colead@example.org",
    ]
    message = mail.outbox[0]
    assert (
        message.subject
        == f"[{mailed.project.name}] Export #{job.pk} (1 pair) is ready to download."
    )
    assert "https://arbiter.example.org/projects/ann/exports/" in message.body
    assert message.content_subtype == "plain" and not message.alternatives


def test_without_a_mail_server_nothing_is_mailed_but_the_list_is_kept(
    mailed, exportable, fire, settings
):
    settings.EMAIL_BACKEND = global_settings.EMAIL_BACKEND
    settings.EMAIL_HOST = global_settings.EMAIL_HOST
    with fire():
        export_job_start(mailed.project, mailed.lead)
    assert mail.outbox == []
    assert Notification.objects.filter(kind="export.ready").count() == 2


def test_flags_are_not_mailed_unless_chosen_and_a_lead_can_leave_them_out_of_the_list(mailed, fire):
    NotificationPreference.objects.create(
        user=mailed.lead, kind="flag.raised", in_app=False, email=True
    )
    with fire():
        assignment_flag(assignment_claim(mailed.ann, mailed.task).pk, mailed.ann, "unsafe")
    # boss: by mail only, as chosen; colead: in the list only, the default for flags.
    assert [message.to for message in mail.outbox] == [["boss@example.org"]]
    assert "ann flagged the pair “" in mail.outbox[0].body  # by its prompt, never its id
    recipients = Notification.objects.filter(kind="flag.raised").values_list(
        "recipient__username", flat=True
    )
    assert list(recipients) == ["colead"]


def test_the_settings_page_saves_each_choice(client, mailed):
    client.force_login(mailed.lead)
    url = reverse("notification-settings")
    page = client.get(url).content.decode()
    assert 'name="email:export.ready"' in page and "An export is ready" in page
    answer = client.post(url, {"in_app:export.ready": "on", "email:flag.raised": "on"})
    assert answer.status_code == 302
    chosen = {
        kind: (in_app, email)
        for kind, in_app, email in NotificationPreference.objects.filter(
            user=mailed.lead
        ).values_list("kind", "in_app", "email")
    }
    assert chosen["export.ready"] == (True, False)
    assert chosen["flag.raised"] == (False, True)
    assert chosen["run.failed"] == (False, False)


def test_an_annotator_chooses_only_among_what_may_reach_them(client, mailed):
    client.force_login(mailed.ann)
    page = client.get(reverse("notification-settings")).content.decode()
    assert "An annotator paused by the gold checks" in page
    assert "An answer to my question" in page
    assert "flag.raised" not in page and "export.ready" not in page


def test_without_a_mail_server_the_page_keeps_the_e_mail_choices(client, mailed, settings):
    NotificationPreference.objects.create(
        user=mailed.lead, kind="run.failed", in_app=True, email=True
    )
    settings.EMAIL_BACKEND = global_settings.EMAIL_BACKEND
    settings.EMAIL_HOST = global_settings.EMAIL_HOST
    client.force_login(mailed.lead)
    page = client.get(reverse("notification-settings")).content.decode()
    assert "This server sends no mail" in page and 'name="email:' not in page
    client.post(reverse("notification-settings"), {"in_app:run.failed": "on"})
    preference = NotificationPreference.objects.get(user=mailed.lead, kind="run.failed")
    assert (preference.in_app, preference.email) == (True, True)
