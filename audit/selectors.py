"""Reading the trail: a project's entries for its leads, every entry for the operator.

Query budget of a page, whatever the trail's size: the page's rows plus one row more (that is
how the page knows a next one exists; no COUNT over a trail that only grows), on the index
(project_id, -timestamp, -id). The CSV reads the same filter in chunks of 2,000 rows.
"""

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, datetime, time, timedelta

from django.db.models import QuerySet
from django.utils import timezone

from audit.models import AuditEntry

PAGE_SIZE = 50
CSV_HEADER = ["time", "kind", "action", "object", "project", "who", "from", "changes"]
ACTIONS = dict(AuditEntry.Action.choices)


@dataclass(frozen=True)
class TrailFilter:
    kind: str = ""
    who: str = ""
    since: date | None = None
    until: date | None = None


@dataclass
class TrailPage:
    rows: list[AuditEntry]
    page: int
    has_next: bool


def _start_of(day: date) -> datetime:
    return timezone.make_aware(datetime.combine(day, time.min))


def trail_entries(project_id: int | None, filters: TrailFilter) -> QuerySet[AuditEntry]:
    """A project's entries (`project_id` None: the whole trail, the operator's), filtered."""
    entries: QuerySet[AuditEntry] = AuditEntry.objects.all()
    if project_id is not None:
        entries = entries.filter(project_id=project_id)
    if filters.kind:
        entries = entries.filter(kind=filters.kind)
    if filters.who:
        entries = entries.filter(actor_name=filters.who)
    # The first and last days a date field accepts bound nothing: the day after 9999-12-31, or
    # 0001-01-01 moved to UTC from a zone ahead of it, would not be a datetime at all.
    if filters.since is not None and filters.since > date.min + timedelta(days=1):
        entries = entries.filter(timestamp__gte=_start_of(filters.since))
    if filters.until is not None and filters.until < date.max - timedelta(days=1):
        entries = entries.filter(timestamp__lt=_start_of(filters.until + timedelta(days=1)))
    return entries.order_by("-timestamp", "-id")


def trail_page(project_id: int | None, filters: TrailFilter, page: int) -> TrailPage:
    start = (page - 1) * PAGE_SIZE
    rows = list(trail_entries(project_id, filters)[start : start + PAGE_SIZE + 1])
    return TrailPage(rows=rows[:PAGE_SIZE], page=page, has_next=len(rows) > PAGE_SIZE)


def changes_text(entry: AuditEntry) -> str:
    """`field: old → new; …` (auditlog's diff), or the tasks/projects added or removed."""
    parts = []
    for name, values in (entry.changes or {}).items():
        if isinstance(values, dict):  # a many-to-many change
            objects = ", ".join(str(o) for o in values.get("objects", []))
            parts.append(f"{name}: {values.get('operation', '')} {objects}")
        elif isinstance(values, list | tuple) and len(values) == 2:
            parts.append(f"{name}: {values[0]} → {values[1]}")
        else:
            parts.append(f"{name}: {values}")
    return "; ".join(parts)


def trail_csv_rows(project_id: int | None, filters: TrailFilter) -> Iterator[list[object]]:
    for entry in trail_entries(project_id, filters).iterator(chunk_size=2000):
        yield [
            entry.timestamp.isoformat(),
            entry.kind,
            ACTIONS.get(entry.action, entry.action),
            entry.object_repr,
            entry.project_id if entry.project_id is not None else "",
            entry.actor_name,
            entry.remote_addr or "",
            changes_text(entry),
        ]
