"""Asking, answering and noting on a pair: who may, what is stored, what is published, and
what each reader is shown (the blinding rules of annotation/selectors/pair_threads.py)."""

import pytest
from django.db import IntegrityError, transaction

from annotation.models import Assignment, PairMessage, PairThread
from annotation.models.pair_thread import MAX_BODY_CHARS
from annotation.selectors.pair_threads import (
    annotator_threads,
    open_questions,
    pair_conversation,
)
from annotation.services.pair_threads import (
    MessageInvalid,
    QuestionRefused,
    ThreadNotFound,
    pair_note_add,
    question_answer,
    question_ask,
)
from annotation.services.ratings import RatingInput, rating_submit
from projects.events import project_event
from projects.models import Membership

pytestmark = pytest.mark.django_db


@pytest.fixture
def events():
    heard = []

    def listener(sender, *, project, kind, data, actor, **_):
        heard.append((project.slug, kind, data, actor.username))

    project_event.connect(listener, dispatch_uid="pair-threads-test")
    yield heard
    project_event.disconnect(dispatch_uid="pair-threads-test")


def _ask(scene, body="Is the left image cropped on purpose?"):
    return question_ask(assignment_id=scene.asked_on.pk, user=scene.asker, body=body)


def _rate(user, assignment):
    rating_submit(assignment.pk, user, RatingInput(overall="2", aspects={}, rationale=""))
    assignment.refresh_from_db()


def test_a_question_opens_a_thread_with_the_askers_view_of_the_sides(scene):
    message = _ask(scene)
    thread = message.thread
    assert (thread.pair, thread.asker, thread.status) == (scene.pair, scene.asker, "open")
    assert thread.asker_swapped is False and thread.left_meant == "A"
    follow_up = question_ask(assignment_id=scene.other_on.pk, user=scene.other, body="Which?")
    assert follow_up.thread.asker_swapped is True and follow_up.thread.left_meant == "B"


def test_asking_and_answering_publish_ids_only_once_committed(
    scene, events, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        asked = _ask(scene, "secret words")
    with django_capture_on_commit_callbacks(execute=True):
        answer = question_answer(thread_id=asked.thread_id, lead=scene.lead, body="more words")
    assert events == [
        ("talk", "question.asked",
         {"pair": scene.pair.pk, "thread": asked.thread_id, "message": asked.pk}, "asker"),
        ("talk", "question.answered",
         {"pair": scene.pair.pk, "thread": asked.thread_id, "message": answer.pk,
          "asker": scene.asker.pk, "assignment": scene.asked_on.pk}, "lead"),
    ]  # fmt: skip
    assert "words" not in repr(events)


def test_an_answer_closes_the_thread_and_a_follow_up_opens_it_again(scene):
    asked = _ask(scene)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body="Yes, on purpose.")
    assert PairThread.objects.get().status == PairThread.Status.ANSWERED
    _ask(scene, "And the right one?")
    thread = PairThread.objects.get()
    assert thread.status == PairThread.Status.OPEN
    assert list(thread.messages.values_list("kind", flat=True)) == [
        "question",
        "answer",
        "question",
    ]


@pytest.mark.parametrize("body", ["", "   \n ", "x" * (MAX_BODY_CHARS + 1)])
def test_empty_or_overlong_messages_are_refused(scene, body):
    with pytest.raises(MessageInvalid) as refused:
        _ask(scene, body)
    assert "body" in refused.value.fields
    asked = _ask(scene)
    with pytest.raises(MessageInvalid):
        question_answer(thread_id=asked.thread_id, lead=scene.lead, body=body)
    with pytest.raises(MessageInvalid):
        pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body=body)
    assert PairMessage.objects.count() == 1


def test_the_database_bounds_the_body_and_keeps_notes_out_of_threads(scene):
    thread = _ask(scene).thread
    made = {"pair": scene.pair, "author": scene.lead}
    bad = [
        {"kind": "note", "thread": thread, "body": "a note inside a thread"},
        {"kind": "answer", "thread": None, "body": "an answer in no thread"},
        {"kind": "note", "thread": None, "body": ""},
        {"kind": "note", "thread": None, "body": "x" * (MAX_BODY_CHARS + 1)},
        {"kind": "shout", "thread": None, "body": "an unknown kind"},
    ]
    for fields in bad:
        with pytest.raises(IntegrityError), transaction.atomic():
            PairMessage.objects.create(**made, **fields)


def test_an_annotator_cannot_ask_on_someone_elses_assignment_or_after_leaving(scene):
    with pytest.raises(ThreadNotFound):
        question_ask(assignment_id=scene.asked_on.pk, user=scene.other, body="mine?")
    with pytest.raises(ThreadNotFound):
        question_ask(assignment_id=scene.asked_on.pk, user=scene.stranger, body="mine?")
    Membership.objects.filter(user=scene.asker).delete()
    with pytest.raises(ThreadNotFound):
        _ask(scene)
    assert not PairThread.objects.exists()


@pytest.mark.parametrize("status", [Assignment.Status.SKIPPED, Assignment.Status.EXPIRED])
def test_an_annotator_who_no_longer_holds_the_pair_cannot_ask(scene, status):
    Assignment.objects.filter(pk=scene.asked_on.pk).update(status=status)
    with pytest.raises(QuestionRefused):
        _ask(scene)
    assert not PairThread.objects.exists()


def test_only_the_pairs_leads_answer_and_note(scene):
    asked = _ask(scene)
    for user in (scene.asker, scene.other, scene.stranger_lead, scene.stranger):
        with pytest.raises(ThreadNotFound):
            question_answer(thread_id=asked.thread_id, lead=user, body="I answer")
        with pytest.raises(ThreadNotFound):
            pair_note_add(pair_id=scene.pair.pk, lead=user, body="I note")
    assert PairMessage.objects.count() == 1


def test_before_rating_an_annotator_sees_only_their_own_thread(scene):
    asked = _ask(scene)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body="On purpose.")
    pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body="internal: asker is new")
    assert annotator_threads(scene.other, scene.other_on) == []
    (mine,) = annotator_threads(scene.asker, scene.asked_on)
    assert mine.mine and not mine.open
    assert [(m.who, m.body) for m in mine.messages] == [
        ("You", "Is the left image cropped on purpose?"),
        ("A lead", "On purpose."),
    ]


def test_after_rating_an_annotator_sees_every_thread_without_names_or_notes(scene):
    asked = _ask(scene)
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body="On purpose.")
    pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body="internal: asker is new")
    _rate(scene.other, scene.other_on)
    (theirs,) = annotator_threads(scene.other, scene.other_on)
    assert not theirs.mine and theirs.sides_reversed  # the other annotator saw B on the left
    assert [m.who for m in theirs.messages] == ["An annotator", "A lead"]
    assert (theirs.asker, theirs.left_meant) == ("", "")  # no name, no A/B
    assert [m.body for m in theirs.messages] == [
        "Is the left image cropped on purpose?",
        "On purpose.",
    ]


def test_an_assignment_that_is_not_the_readers_shows_nothing(scene):
    _ask(scene)
    assert annotator_threads(scene.other, scene.asked_on) == []


def test_leads_see_names_sides_and_notes_and_no_one_else_does(scene):
    asked = _ask(scene)
    question_ask(assignment_id=scene.other_on.pk, user=scene.other, body="Which is A?")
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body="On purpose.")
    pair_note_add(pair_id=scene.pair.pk, lead=scene.lead, body="internal: asker is new")
    conversation = pair_conversation(scene.lead, scene.pair.pk)
    # Waiting threads first.
    assert [(t.asker, t.left_meant, t.open) for t in conversation.threads] == [
        ("other", "B", True),
        ("asker", "A", False),
    ]
    assert [(n.who, n.body) for n in conversation.notes] == [("lead", "internal: asker is new")]
    for user in (scene.asker, scene.stranger_lead):
        assert pair_conversation(user, scene.pair.pk) is None


def test_open_questions_list_the_waiting_threads_for_the_projects_leads(
    scene, django_assert_num_queries
):
    asked = _ask(scene, "first question")
    question_ask(assignment_id=scene.other_on.pk, user=scene.other, body="second question")
    question_answer(thread_id=asked.thread_id, lead=scene.lead, body="answered")
    with django_assert_num_queries(2):
        count, shown = open_questions(scene.lead, scene.project)
    assert count == 1
    assert [(q.asker, q.question, q.pair_id) for q in shown] == [
        ("other", "second question", scene.pair.pk)
    ]
    assert open_questions(scene.stranger_lead, scene.project) == (0, [])
    assert open_questions(scene.asker, scene.project) == (0, [])
