"""Conversations on a pair (annotation/models/pair_thread.py): an annotator asks about the pair
in front of them, a lead answers, a lead leaves an internal note.

Who may do what:
- `question_ask`: the annotator of the assignment, while they still belong to the project
  (annotation/access.py::own_assignments) and hold the pair (leased) or have rated it. Each
  assignment has one thread: a follow-up question goes into it and opens it again.
- `question_answer` and `pair_note_add`: a lead of the pair's project (projects/access.py).
  Anything out of the user's scope answers like a missing row (`ThreadNotFound`, 404).
- Each of the three is limited per user (core/rate_limits.py, `RateLimited`, 429): a question
  or an answer may mail people, and a refused one stores and publishes nothing.

Writers lock the pair row first, the order every writer of a pair uses (assignments,
ratings, adjudication), so that a question and an answer on one thread never interleave
with the thread's status. `question.asked` and `question.answered` are published
(projects/events.py) with ids only: the text and the asker's view stay in the database,
where the selectors apply the blinding rules.
"""

from django.contrib.auth.models import User
from django.db import transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.access import led_pairs, own_assignments
from annotation.models import Assignment, PairMessage, PairThread
from annotation.models.pair_thread import MAX_BODY_CHARS
from content.models import Pair
from core.errors import Invalid, NotFound, Refused
from core.rate_limits import rate_limit_take
from projects.events import publish

# The assignments whose annotator has the pair in front of them, or has rated it.
_MAY_ASK = (Assignment.Status.LEASED, Assignment.Status.SUBMITTED)


class MessageInvalid(Invalid):
    """The message is empty or too long (400, on the `body` field)."""

    def __init__(self, message: str):
        super().__init__(message, {"body": [message]})


class ThreadNotFound(NotFound):
    """No such assignment, thread or pair for this user (404, like a missing one)."""


class QuestionRefused(Refused):
    """The annotator no longer holds the pair (skipped, or the lease expired)."""


def _body_check(body: str) -> str:
    body = (body or "").strip()
    if not body:
        raise MessageInvalid(gettext("Write your message first."))
    if len(body) > MAX_BODY_CHARS:
        raise MessageInvalid(
            gettext("Keep it under %(limit)s characters (%(count)s now).")
            % {"limit": MAX_BODY_CHARS, "count": len(body)}
        )
    return body


def _lock_pair(pair_id: int) -> Pair:
    return Pair.objects.select_for_update(of=("self",)).select_related("project").get(pk=pair_id)


def question_ask(*, assignment_id: int, user: User, body: str) -> PairMessage:
    """Ask the leads about the assignment's pair; the question goes into the assignment's
    thread (made on the first question, with the annotator's view of the sides) and the
    thread waits for an answer. Raises MessageInvalid, ThreadNotFound when the assignment is
    not the user's (or they left the project), QuestionRefused when they skipped the pair or
    their lease expired."""
    body = _body_check(body)
    pair_id = (
        own_assignments(user)
        .filter(pk=assignment_id, annotator__placeholder__isnull=True)
        .values_list("pair_id", flat=True)
        .first()
    )
    if pair_id is None:
        raise ThreadNotFound(gettext("No such assignment."))
    rate_limit_take(action="question.ask", user_id=user.pk)  # each question mails the leads
    with transaction.atomic():
        pair = _lock_pair(pair_id)
        assignment = Assignment.objects.select_for_update().get(pk=assignment_id)
        if assignment.status not in _MAY_ASK:
            raise QuestionRefused(
                gettext(
                    "You no longer hold this pair, so you cannot ask about it. "
                    "Ask about the pair you are rating."
                )
            )
        thread = PairThread.objects.filter(assignment=assignment).first()
        if thread is None:
            thread = PairThread.objects.create(
                pair=pair, assignment=assignment, asker=user, asker_swapped=assignment.swapped
            )
        elif thread.status != PairThread.Status.OPEN:
            thread.status = PairThread.Status.OPEN
            thread.save(update_fields=["status", "updated_at"])
        else:
            thread.save(update_fields=["updated_at"])
        message = PairMessage.objects.create(
            pair=pair, thread=thread, author=user, kind=PairMessage.Kind.QUESTION, body=body
        )
        publish(
            pair.project,
            "question.asked",
            {"pair": pair.pk, "thread": thread.pk, "message": message.pk},
            actor=user,
        )
    return message


def question_answer(*, thread_id: int, lead: User, body: str) -> PairMessage:
    """Answer a thread as a lead of its pair's project; the thread is answered until its
    asker asks again. Raises MessageInvalid, ThreadNotFound when the thread is not of a pair
    the user leads."""
    body = _body_check(body)
    pair_id = (
        PairThread.objects.filter(pk=thread_id, pair__in=led_pairs(lead))
        .values_list("pair_id", flat=True)
        .first()
    )
    if pair_id is None:
        raise ThreadNotFound(gettext("No such question."))
    rate_limit_take(action="question.answer", user_id=lead.pk)  # each answer mails the asker
    with transaction.atomic():
        pair = _lock_pair(pair_id)
        thread = PairThread.objects.select_for_update().get(pk=thread_id)
        thread.status = PairThread.Status.ANSWERED
        thread.updated_at = timezone.now()
        thread.save(update_fields=["status", "updated_at"])
        message = PairMessage.objects.create(
            pair=pair, thread=thread, author=lead, kind=PairMessage.Kind.ANSWER, body=body
        )
        publish(
            pair.project,
            "question.answered",
            {
                "pair": pair.pk,
                "thread": thread.pk,
                "message": message.pk,
                # Whom to tell, and where they read the answer (their annotate page).
                "asker": thread.asker_id,
                "assignment": thread.assignment_id,
            },
            actor=lead,
        )
    return message


def pair_note_add(*, pair_id: int, lead: User, body: str) -> PairMessage:
    """Leave an internal note on a pair the user leads: leads read it on the pair's page,
    annotators never. Raises MessageInvalid, ThreadNotFound when the pair is not the user's
    to lead."""
    body = _body_check(body)
    if not led_pairs(lead).filter(pk=pair_id).exists():
        raise ThreadNotFound(gettext("No such pair."))
    rate_limit_take(action="pair.note", user_id=lead.pk)
    return PairMessage.objects.create(
        pair_id=pair_id, thread=None, author=lead, kind=PairMessage.Kind.NOTE, body=body
    )
