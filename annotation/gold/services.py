"""Gold checks: setting them, mixing them into each annotator's queue, and holding
back an annotator whose gold accuracy falls below the task's threshold.

A gold pair is answered once by any number of annotators (no slots, no consensus). When one
is due and which: annotation/gold/schedule.py, read by annotation/gold/due.py;
nothing on the page tells it apart, not even what the page preloads."""

import csv
import io
import random
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime

from django.contrib.auth.models import User
from django.db import IntegrityError, transaction
from django.db.models import Exists, OuterRef
from django.utils import timezone

from annotation.gold.models import GOLD_FROM_STATUSES
from annotation.models import AnnotatorPause, Assignment, Flag, GoldAnswer, Rating
from content.importing.errors import ImportFailed
from content.importing.records import PairRecord
from content.models import Pair
from core.errors import Invalid, Refused
from projects.events import publish
from projects.models import Membership, Task
from projects.scale import answers_expected_side


@dataclass(frozen=True)
class GoldEntry:
    external_id: str
    side: str
    explanation: str = ""
    qualification: bool = False  # in the task's qualification set instead of the queue


MAX_GOLD_FILE_BYTES = 2 * 1024 * 1024
MAX_GOLD_ROWS = 20_000


def gold_entries_from_csv(data: bytes) -> list[GoldEntry]:
    """Parse a gold file: CSV with the header `pair_id,side` (optional columns: `explanation`,
    and `qualification` yes/no for the qualification set), side A or B. Raises Invalid with
    the line of the first problem."""
    if len(data) > MAX_GOLD_FILE_BYTES:
        raise Invalid(f"The gold file is larger than {MAX_GOLD_FILE_BYTES // 1024 // 1024} MB.")
    try:
        text = data.decode("utf-8-sig")
    except UnicodeDecodeError:
        raise Invalid("The gold file is not UTF-8 text.") from None
    reader = csv.DictReader(io.StringIO(text))
    header = [name.strip() for name in reader.fieldnames or []]
    if not {"pair_id", "side"} <= set(header):
        raise Invalid("The gold file needs the header pair_id,side (explanation optional).")
    reader.fieldnames = header
    entries: list[GoldEntry] = []
    try:
        for line, row in enumerate(reader, start=2):
            if len(entries) >= MAX_GOLD_ROWS:
                raise Invalid(f"The gold file has more than {MAX_GOLD_ROWS} rows.")
            pair_id, side = (row.get("pair_id") or "").strip(), (row.get("side") or "").strip()
            if not pair_id:
                raise Invalid(f"line {line}: pair_id is empty")
            if side.upper() not in ("A", "B"):
                raise Invalid(f"line {line}: side must be A or B, not {side!r}")
            explanation = (row.get("explanation") or "").strip()[:2000]
            qualifying = (row.get("qualification") or "").strip().lower()
            if qualifying not in ("", "0", "1", "yes", "no", "true", "false"):
                raise Invalid(f"line {line}: qualification must be yes or no")
            entries.append(
                GoldEntry(pair_id, side.upper(), explanation, qualifying in ("1", "yes", "true"))
            )
    except csv.Error as exc:
        raise Invalid(f"The gold file is not valid CSV: {exc}") from None
    if not entries:
        raise Invalid("The gold file lists no pair.")
    return entries


def gold_set(
    task: Task, entries: list[GoldEntry], *, by: User | None = None, rate: float | None = None
) -> int:
    """Make these pairs of the task gold checks with their expected side (all or nothing).
    Returns how many pairs became gold (already gold ones get the new side). Raises Invalid
    naming every refused entry. `by`: the lead who sets them; None for an import or a
    command."""
    if rate is not None and not 0 <= rate <= 0.5:
        raise Invalid("The gold rate is a share between 0 and 0.5 (0.1: one pair in ten).")
    problems: list[str] = []
    wanted: dict[str, GoldEntry] = {}
    for entry in entries:
        if entry.side not in ("A", "B"):
            problems.append(f"{entry.external_id}: side must be A or B, not {entry.side!r}")
        if "\x00" in entry.explanation or "\x00" in entry.external_id:
            problems.append(f"{entry.external_id!r}: a NUL character is not text")
        wanted[entry.external_id] = entry
    with transaction.atomic():
        pairs = {
            pair.external_id: pair
            for pair in Pair.objects.select_for_update()
            .filter(task=task, external_id__in=list(wanted))
            # Exists, not Count: PostgreSQL refuses FOR UPDATE with a GROUP BY.
            .annotate(rated=Exists(Rating.objects.filter(pair=OuterRef("pk"))))
        }
        for external_id in wanted:
            pair = pairs.get(external_id)
            if pair is None:
                problems.append(f"{external_id}: no such pair in task {task.slug}")
            elif pair.status != Pair.Status.GOLD and (
                pair.status not in GOLD_FROM_STATUSES or pair.rated
            ):
                problems.append(
                    f"{external_id}: is {pair.get_status_display().lower()}; gold checks "
                    "are taken from pairs nobody rated yet"
                )
        if problems:
            raise Invalid("; ".join(problems[:20]) + (" …" if len(problems) > 20 else ""))
        made = 0
        for external_id, entry in wanted.items():
            pair = pairs[external_id]
            if pair.status == Pair.Status.GOLD:
                # Saved, not a queryset update: the audit trail records the change (audit/).
                gold = GoldAnswer.objects.get(pair=pair)
                gold.side, gold.explanation = entry.side, entry.explanation
                gold.qualification = entry.qualification
                gold.save(update_fields=["side", "explanation", "qualification"])
                # The figures read the expected side: the dashboards' cache version moves.
                Pair.objects.filter(pk=pair.pk).update(updated_at=timezone.now())
                continue
            GoldAnswer.objects.create(
                pair=pair,
                side=entry.side,
                explanation=entry.explanation,
                qualification=entry.qualification,
                previous_status=pair.status,
                set_by=by,
            )
            Pair.objects.filter(pk=pair.pk).update(
                status=Pair.Status.GOLD, updated_at=timezone.now()
            )
            made += 1
        if rate is not None:
            task.gold_rate = rate
            task.save(update_fields=["gold_rate"])
        if by is not None:  # a lead looked at these pairs: their open flags are answered
            Flag.objects.filter(
                pair_id__in=[pair.pk for pair in pairs.values()], resolved_at__isnull=True
            ).update(resolved_at=timezone.now(), resolved_by=by)
        return made


def gold_from_import(task: Task, records: Iterable[PairRecord]) -> int:
    """The gold checks a pair file marks (its records' `gold` field), set inside the import's
    transaction: a refused one refuses the whole file. How many pairs became gold."""
    entries = [
        GoldEntry(record.external_id, gold.side, gold.explanation, gold.qualification)
        for record in records
        if (gold := record.gold) is not None
    ]
    if not entries:
        return 0
    # A file never rewrites a gold check someone answered: its answers were scored on that
    # side (a lead changes it on the pair page, knowingly).
    wanted = {entry.external_id: entry for entry in entries}
    answered = GoldAnswer.objects.filter(
        pair__task=task, pair__external_id__in=list(wanted), pair__ratings__isnull=False
    ).values_list("pair__external_id", "side", "explanation", "qualification")
    changed = sorted(
        {
            external_id
            for external_id, side, explanation, qualification in answered
            if (side, explanation, qualification)
            != (wanted[external_id].side, wanted[external_id].explanation,
                wanted[external_id].qualification)
        }
    )  # fmt: skip
    if changed:
        raise ImportFailed(
            f"gold checks refused: {', '.join(changed[:20])} already answered with another "
            "expected side or explanation; change them on the pair page"
        )
    try:
        return gold_set(task, entries)
    except Invalid as exc:
        raise ImportFailed(f"gold checks refused: {exc}") from None


def gold_unset(pair: Pair) -> None:
    """Turn a gold check back into an ordinary pair, while nobody has answered it."""
    with transaction.atomic():
        pair = Pair.objects.select_for_update().get(pk=pair.pk)
        gold = GoldAnswer.objects.filter(pair=pair).first()
        if gold is None:
            raise Refused("This pair is not a gold check.")
        if Rating.objects.filter(pair=pair).exists():
            raise Refused("Annotators answered this gold check; it stays one.")
        # Open leases go; a skip or a flag stays (and that annotator never gets the pair).
        Assignment.objects.filter(pair=pair, status=Assignment.Status.LEASED).delete()
        Pair.objects.filter(pk=pair.pk).update(
            status=gold.previous_status, updated_at=timezone.now()
        )
        gold.delete()


def gold_assignment_create(user: User, pair_id: int, lease_end: datetime) -> Assignment:
    """A gold check takes no slot, so it needs no lock: the unique (pair, annotator) is all.
    Two claims of the same annotator at once (two tabs) may pick the same gold pair: the
    second gets the first's assignment."""
    try:
        with transaction.atomic():
            return Assignment.objects.create(
                pair_id=pair_id,
                annotator=user,
                swapped=random.random() < 0.5,
                lease_expires_at=lease_end,
            )
    except IntegrityError:
        return Assignment.objects.get(pair_id=pair_id, annotator=user)


def gold_record(user_id: int, task: Task, since: datetime | None = None) -> tuple[int, int]:
    """(correct, answered) of the annotator's gold answers in the task (rated at or after
    `since` when given); a tie is wrong."""
    rows = Rating.objects.filter(
        annotator_id=user_id,
        pair__task=task,
        pair__status=Pair.Status.GOLD,
        pair__gold__qualification=False,  # the qualification set is judged on its own
    )
    if since is not None:
        rows = rows.filter(created_at__gte=since)
    answers = rows.values_list("overall", "scale", "pair__gold__side")
    correct = sum(answers_expected_side(*answer) for answer in answers)
    return correct, len(answers)


def annotator_paused(user: User, task: Task) -> AnnotatorPause | None:
    return AnnotatorPause.objects.filter(
        task=task, annotator=user, readmitted_at__isnull=True
    ).first()


def gold_review(user: User, task: Task) -> AnnotatorPause | None:
    """After a gold answer: pause the annotator's access to the task when the task says so
    and their accuracy, over at least the task's minimum answers since their last
    re-admission, is below its threshold."""
    if task.gold_action != Task.GoldAction.PAUSE or annotator_paused(user, task):
        return None
    since = (
        AnnotatorPause.objects.filter(task=task, annotator=user, readmitted_at__isnull=False)
        .order_by("-readmitted_at")
        .values_list("readmitted_at", flat=True)
        .first()
    )
    correct, answered = gold_record(user.pk, task, since)
    if answered < task.gold_min_answers or correct / answered >= task.gold_min_accuracy:
        return None
    try:
        with transaction.atomic():
            pause = AnnotatorPause.objects.create(
                task=task,
                annotator=user,
                reason=(
                    f"{correct} of {answered} gold checks right "
                    f"(below {task.gold_min_accuracy:.0%} after {task.gold_min_answers})"
                ),
            )
            about = {"annotator": user.pk, "username": user.username, "task": task.slug}
            publish(task.project, "annotator.paused", about, actor=None)
            return pause
    except IntegrityError:
        return annotator_paused(user, task)  # paused by a concurrent answer of theirs


PAUSE_REASON_CHARS = 500


def annotator_pause(task: Task, annotator_id: int, *, by: User, reason: str) -> AnnotatorPause:
    """A lead holds an annotator back from the task (their ratings stay; new claims are
    refused) until a lead re-admits them. Pausing someone already paused changes nothing.
    Raises Invalid for an empty or over-long reason, Refused when the user is not one of the
    project's annotators. `by`: the lead who pauses them."""
    reason = " ".join(str(reason).split())
    if not reason:
        raise Invalid("Say why, for the other leads and the annotator's record.")
    if len(reason) > PAUSE_REASON_CHARS:
        raise Invalid(f"The reason is at most {PAUSE_REASON_CHARS} characters.")
    if not Membership.objects.filter(
        project_id=task.project_id, user_id=annotator_id, role=Membership.Role.ANNOTATOR
    ).exists():
        raise Refused("Only the project's annotators can be paused.")
    try:
        with transaction.atomic():
            return AnnotatorPause.objects.create(
                task=task, annotator_id=annotator_id, reason=reason, paused_by=by
            )
    except IntegrityError:  # paused already (the gold rule, another lead)
        return AnnotatorPause.objects.get(
            task=task, annotator_id=annotator_id, readmitted_at__isnull=True
        )


def annotator_readmit(task: Task, annotator_id: int, *, by: User) -> bool:
    """A lead lets a paused annotator back into the task; their ratings were never touched,
    and their gold record starts again from here (a fresh minimum of answers). `by`: the
    lead who re-admits them."""
    updated = AnnotatorPause.objects.filter(
        task=task, annotator_id=annotator_id, readmitted_at__isnull=True
    ).update(readmitted_at=timezone.now(), readmitted_by=by)
    return bool(updated)
