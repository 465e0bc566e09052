"""Conversations on a pair: an annotator's questions to the leads, the leads' answers, and the
leads' internal notes. Written by annotation/services/pair_threads.py, read (with the blinding
rules) through annotation/selectors/pair_threads.py."""

from django.conf import settings
from django.db import models
from django.db.models import Q
from django.db.models.functions import Length
from django.db.models.lookups import GreaterThanOrEqual, LessThanOrEqual

# A message is a question or a remark, not a document: long enough for a careful paragraph
# or two, short enough to read in the pair's page.
MAX_BODY_CHARS = 4000


class ThreadStatus(models.TextChoices):
    OPEN = "open", "Waiting for an answer"
    ANSWERED = "answered", "Answered"


class PairThread(models.Model):
    """One annotator's questions about one pair and the leads' answers: one thread per
    assignment, so an annotator who has not rated the pair sees their own thread and nothing
    of anyone else's. `asker_swapped` is the asker's view when they asked (True: response B
    was on their left), so that "the left image" can be read as A or B."""

    Status = ThreadStatus

    pair = models.ForeignKey("content.Pair", on_delete=models.CASCADE, related_name="threads")
    assignment = models.OneToOneField(
        "annotation.Assignment", on_delete=models.CASCADE, related_name="thread"
    )
    asker = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="pair_threads"
    )
    asker_swapped = models.BooleanField()
    status = models.CharField(max_length=16, choices=Status.choices, default=Status.OPEN)
    created_at = models.DateTimeField(auto_now_add=True)
    # The last question or answer: the overview lists open questions oldest first by it.
    updated_at = models.DateTimeField(auto_now=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            models.CheckConstraint(
                condition=Q(status__in=ThreadStatus.values), name="pair_thread_status_valid"
            ),
            models.UniqueConstraint(fields=["pair", "asker"], name="pair_thread_one_per_asker"),
        ]
        indexes = [models.Index(fields=["status", "pair"])]

    def __str__(self) -> str:
        return f"{self.pair} · {self.asker} · {self.status}"

    @property
    def left_meant(self) -> str:
        """Which response the asker's "left" was: "A" or "B"."""
        return "B" if self.asker_swapped else "A"


class MessageKind(models.TextChoices):
    QUESTION = "question", "Question"
    ANSWER = "answer", "Answer"
    NOTE = "note", "Internal note"


class PairMessage(models.Model):
    """A question (by the thread's asker), an answer (by a lead) in a thread, or a lead's
    internal note on the pair, in no thread and never shown to an annotator."""

    Kind = MessageKind

    pair = models.ForeignKey(
        "content.Pair", on_delete=models.CASCADE, related_name="thread_messages"
    )
    thread = models.ForeignKey(
        PairThread, on_delete=models.CASCADE, null=True, blank=True, related_name="messages"
    )
    author = models.ForeignKey(
        settings.AUTH_USER_MODEL, on_delete=models.PROTECT, related_name="pair_messages"
    )
    kind = models.CharField(max_length=16, choices=Kind.choices)
    body = models.TextField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        ordering = ["created_at", "id"]
        constraints = [
            # First: tests/domain/test_choice_constraints.py reads the first `kind__in`.
            models.CheckConstraint(
                condition=Q(kind__in=MessageKind.values), name="pair_message_kind_valid"
            ),
            # A note belongs to no thread (so no thread query can reach it); the others to one.
            models.CheckConstraint(
                condition=Q(kind=MessageKind.NOTE, thread__isnull=True)
                | Q(kind__in=[MessageKind.QUESTION, MessageKind.ANSWER], thread__isnull=False),
                name="pair_message_note_outside_threads",
            ),
            models.CheckConstraint(
                condition=GreaterThanOrEqual(Length("body"), 1)
                & LessThanOrEqual(Length("body"), MAX_BODY_CHARS),
                name="pair_message_body_length",
            ),
        ]
        indexes = [models.Index(fields=["pair", "kind"])]

    def __str__(self) -> str:
        return f"{self.pair} · {self.kind} by {self.author}"
