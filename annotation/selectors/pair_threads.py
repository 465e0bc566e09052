"""Reads of the conversations on a pair, with the blinding rules (annotation/models/pair_thread.py).

An annotator sees, on the pair of one of their own assignments:
- their own thread, always;
- every other annotator's thread once they have submitted their own rating of the pair (not
  before: a question can hint at the asker's opinion);
- never an internal note, never a name: the asker is "you" or "an annotator", an answer's
  author "a lead". Views built here carry no user object, so a template cannot show one.
A lead sees every thread of the pairs they lead, with names, which response the asker's
"left" was, and the internal notes.

Query budgets, whatever the number of threads and messages: `annotator_threads` 1 query,
`pair_conversation` 2, `open_questions` 2 (1 when none waits).
"""

from dataclasses import dataclass, field
from datetime import datetime

from django.contrib.auth.models import User
from django.db.models import OuterRef, Subquery
from django.utils.translation import gettext as _

from annotation.access import led_pairs
from annotation.models import Assignment, PairMessage, PairThread
from projects.access import AnyUser, led_projects
from projects.models import Project

# The overview lists this many open questions (the oldest first), and says how many more.
OPEN_QUESTIONS_SHOWN = 20


@dataclass
class MessageView:
    kind: str
    who: str
    body: str
    created_at: datetime


@dataclass
class ThreadView:
    id: int
    status: str
    mine: bool = False
    # For a lead: who asked and which response their "left" was.
    asker: str = ""
    left_meant: str = ""
    # For another annotator: the asker saw the sides the other way round.
    sides_reversed: bool = False
    messages: list[MessageView] = field(default_factory=list)

    @property
    def open(self) -> bool:
        return self.status == PairThread.Status.OPEN


@dataclass
class Conversation:
    threads: list[ThreadView]
    notes: list[MessageView]


def annotator_threads(user: User, assignment: Assignment) -> list[ThreadView]:
    """The threads the annotator of `assignment` may read on its pair (their own first).
    `assignment` comes from a scoped selector (assignment_for_annotator); one that is not the
    user's shows nothing."""
    if assignment.annotator_id != user.pk:
        return []
    rated = assignment.status == Assignment.Status.SUBMITTED
    messages = PairMessage.objects.filter(
        thread__pair_id=assignment.pair_id,
        kind__in=[PairMessage.Kind.QUESTION, PairMessage.Kind.ANSWER],
    )
    if not rated:
        messages = messages.filter(thread__asker=user)
    threads: dict[int, ThreadView] = {}
    for message in messages.select_related("thread").order_by("thread_id", "created_at", "id"):
        thread = message.thread
        assert thread is not None  # questions and answers always have one (a DB constraint)
        view = threads.get(thread.pk)
        if view is None:
            mine = thread.asker_id == user.pk
            view = threads[thread.pk] = ThreadView(
                id=thread.pk,
                status=thread.status,
                mine=mine,
                sides_reversed=not mine and thread.asker_swapped != assignment.swapped,
            )
        if message.kind == PairMessage.Kind.ANSWER:
            who = _("A lead")
        else:
            who = _("You") if view.mine else _("An annotator")
        view.messages.append(MessageView(message.kind, who, message.body, message.created_at))
    return sorted(threads.values(), key=lambda view: (not view.mine, view.id))


def pair_conversation(user: AnyUser, pair_id: int) -> Conversation | None:
    """Every thread and internal note of a pair the user leads, with names; None when the
    pair is not theirs to lead (or does not exist)."""
    if not led_pairs(user).filter(pk=pair_id).exists():
        return None
    threads: dict[int, ThreadView] = {}
    notes = []
    messages = (
        PairMessage.objects.filter(pair_id=pair_id)
        .select_related("thread__asker", "author")
        .order_by("created_at", "id")
    )
    for message in messages:
        view = MessageView(message.kind, message.author.username, message.body, message.created_at)
        thread = message.thread
        if thread is None:
            notes.append(view)
            continue
        if thread.pk not in threads:
            threads[thread.pk] = ThreadView(
                id=thread.pk,
                status=thread.status,
                asker=thread.asker.username,
                left_meant=thread.left_meant,
            )
        threads[thread.pk].messages.append(view)
    ordered = sorted(threads.values(), key=lambda view: (not view.open, view.id))
    return Conversation(threads=ordered, notes=notes)


@dataclass
class OpenQuestion:
    thread_id: int
    pair_id: int
    pair_name: str
    asker: str
    question: str
    waiting_since: datetime


def open_questions(user: AnyUser, project: Project) -> tuple[int, list[OpenQuestion]]:
    """How many threads of the project wait for an answer, and the oldest of them (their
    latest question), for the project's leads; (0, []) for anyone else."""
    waiting = PairThread.objects.filter(
        pair__project=project,
        pair__project__in=led_projects(user),
        status=PairThread.Status.OPEN,
    )
    count = waiting.count()
    if not count:
        return 0, []
    latest = PairMessage.objects.filter(
        thread=OuterRef("pk"), kind=PairMessage.Kind.QUESTION
    ).order_by("-created_at", "-id")
    rows = (
        waiting.select_related("pair", "asker")
        .annotate(question=Subquery(latest.values("body")[:1]))
        .order_by("updated_at", "id")[:OPEN_QUESTIONS_SHOWN]
    )
    return count, [
        OpenQuestion(
            thread_id=row.pk,
            pair_id=row.pair_id,
            pair_name=row.pair.external_id,
            asker=row.asker.username,
            question=row.question or "",
            waiting_since=row.updated_at,
        )
        for row in rows
    ]
