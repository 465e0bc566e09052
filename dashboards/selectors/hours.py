"""Annotators' hours: active time per day and in total, for paying experts by the hour.

Active time is what the annotate page measured while the pair was on screen and the window
had focus (Rating.active_seconds, summed over changes of a rating); imported ratings are
left out: nobody was paid for them here."""

from collections import defaultdict
from datetime import date
from typing import Any

from django.contrib.auth import get_user_model
from django.db.models import Count, Sum
from django.db.models.functions import TruncDate
from django.utils import timezone

from annotation.models import Rating
from projects.models import Project


def annotator_hours(project: Project, *, annotator_id: int | None = None) -> dict[str, Any]:
    """{"days": [dates, newest first], "rows": [{annotator_id, name, total_hours, ratings,
    by_day, cells}]} with by_day {date: hours} and cells the hours in the order of days (None:
    no rating); only the one annotator's row when `annotator_id` is given. Two queries."""
    ratings = Rating.objects.filter(pair__project=project, imported=False)
    if annotator_id is not None:
        ratings = ratings.filter(annotator_id=annotator_id)
    rows = (
        ratings.annotate(day=TruncDate("created_at", tzinfo=timezone.get_current_timezone()))
        .values("annotator", "day")
        .annotate(seconds=Sum("active_seconds"), ratings=Count("id"))
        .order_by()
    )
    by_annotator: defaultdict[int, dict[str, Any]] = defaultdict(
        lambda: {"by_day": {}, "seconds": 0.0, "ratings": 0}
    )
    days: set[date] = set()
    for row in rows:
        entry = by_annotator[row["annotator"]]
        entry["by_day"][row["day"]] = (row["seconds"] or 0) / 3600
        entry["seconds"] += row["seconds"] or 0
        entry["ratings"] += row["ratings"]
        days.add(row["day"])
    names = dict(get_user_model().objects.filter(pk__in=by_annotator).values_list("pk", "username"))
    table = sorted(
        (
            {
                "annotator_id": annotator,
                "name": names.get(annotator, "?"),
                "total_hours": entry["seconds"] / 3600,
                "ratings": entry["ratings"],
                "by_day": entry["by_day"],
            }
            for annotator, entry in by_annotator.items()
        ),
        key=lambda row: row["name"],
    )
    ordered = sorted(days, reverse=True)
    for row in table:
        row["cells"] = [row["by_day"].get(day) for day in ordered]
    return {"days": ordered, "rows": table}


def hours_csv_rows(figures: dict[str, Any]) -> tuple[list[str], list[list[Any]]]:
    """The hours table as CSV: one row per annotator and day, then totals (hours, 4 places)."""
    header = ["annotator", "day", "active_hours", "ratings_total"]
    lines = []
    for row in figures["rows"]:
        for day in sorted(row["by_day"]):
            lines.append([row["name"], day.isoformat(), f"{row['by_day'][day]:.4f}", ""])
        lines.append([row["name"], "total", f"{row['total_hours']:.4f}", row["ratings"]])
    return header, lines
