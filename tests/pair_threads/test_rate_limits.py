"""Questions, answers and notes at a person's pace: a script posting a dozen questions in a
second stores five and mails the leads five times; the rest answer 429, say when to try
again, keep what was typed, and store, publish and mail nothing."""

import pytest
from django.core import mail
from django.urls import reverse

from annotation.models import PairMessage
from annotation.services.pair_threads import question_ask
from core import outbox
from core.rate_limits import LIMITS
from notifications.models import Notification, NotificationPreference

pytestmark = pytest.mark.django_db


@pytest.fixture
def mailing(scene, settings, monkeypatch, tasks_in_process, django_capture_on_commit_callbacks):
    """The server mails, the lead wants questions by mail, and the background runs inline;
    `mailing()` commits what a block did (a test's transaction never commits)."""
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    monkeypatch.setattr(outbox, "_thread_start", lambda work, *args: work(*args))
    for user in (scene.lead, scene.asker):
        user.email = f"{user.username}@example.org"
        user.save(update_fields=["email"])
    NotificationPreference.objects.create(
        user=scene.lead, kind="question.asked", in_app=True, email=True
    )
    return lambda: django_capture_on_commit_callbacks(execute=True)


def test_twelve_questions_in_a_second_store_and_mail_five(client, scene, mailing):
    allowed = LIMITS["question.ask"].count
    client.force_login(scene.asker)
    url = reverse("question-ask", args=[scene.asked_on.pk])
    answers = []
    with mailing():
        for n in range(12):
            body = f"Question {n}: is the crop on purpose?"
            answers.append(client.post(url, {"body": body}, HTTP_HX_REQUEST="true"))
    assert [a.status_code for a in answers] == [200] * allowed + [429] * (12 - allowed)
    assert PairMessage.objects.filter(kind="question").count() == allowed
    assert Notification.objects.filter(recipient=scene.lead).count() == allowed
    assert [m.to for m in mail.outbox] == [["lead@example.org"]] * allowed

    refused = answers[-1]
    menu = refused.content.decode()
    assert menu.lstrip().startswith("<details") and 'aria-invalid="true"' in menu
    assert "Too many requests in a short time; nothing was sent." in menu
    assert "Question 11: is the crop on purpose?" in menu  # what was typed is kept
    assert 1 <= int(refused["Retry-After"]) <= LIMITS["question.ask"].seconds


def test_without_javascript_the_refusal_is_a_page_leading_back(client, scene):
    for n in range(LIMITS["question.ask"].count):
        question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=f"Q{n}")
    client.force_login(scene.asker)
    response = client.post(reverse("question-ask", args=[scene.asked_on.pk]), {"body": "Q"})
    assert response.status_code == 429 and response["Retry-After"]
    page = response.content.decode()
    assert "Too many requests" in page and "Try again in" in page
    assert f'href="/annotate/{scene.asked_on.pk}/#pair-thread"' in page
    assert PairMessage.objects.count() == LIMITS["question.ask"].count


def test_another_annotator_still_asks_while_one_is_refused(client, scene):
    for n in range(LIMITS["question.ask"].count):
        question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=f"Q{n}")
    client.force_login(scene.other)
    url = reverse("question-ask", args=[scene.other_on.pk])
    assert client.post(url, {"body": "Mine"}, HTTP_HX_REQUEST="true").status_code == 200


def test_answers_and_notes_are_limited_and_a_refusal_stores_nothing(
    client, scene, settings, mailing
):
    settings.ARBITER_RATE_LIMITS = {"question.answer": [2, 600], "pair.note": [2, 600]}
    asked = question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body="Why?")
    client.force_login(scene.lead)
    slug, pair = scene.project.slug, scene.pair.pk
    answer_url = reverse("thread-answer", args=[slug, pair, asked.thread_id])
    note_url = reverse("pair-note", args=[slug, pair])
    with mailing():
        answers = [client.post(answer_url, {"body": f"Because {n}"}) for n in range(4)]
        notes = [client.post(note_url, {"body": f"Note {n}"}) for n in range(4)]
    assert [a.status_code for a in answers] == [302, 302, 429, 429]
    assert [n.status_code for n in notes] == [302, 302, 429, 429]
    assert answers[2]["Retry-After"]
    assert f'href="/projects/{slug}/pairs/{pair}/#questions"' in answers[2].content.decode()
    assert PairMessage.objects.filter(kind="answer").count() == 2
    assert PairMessage.objects.filter(kind="note").count() == 2
    assert Notification.objects.filter(recipient=scene.asker).count() == 2
    assert len([m for m in mail.outbox if m.to == ["asker@example.org"]]) == 2
