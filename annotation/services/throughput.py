"""The overview's throughput: ratings made per annotator, project and local day
(annotation.models.AnnotatorDay), counted as ratings land instead of scanned when read."""

from datetime import datetime

from django.db import transaction
from django.db.models import Count, F
from django.db.models.functions import TruncDate
from django.utils import timezone

from annotation.models import AnnotatorDay, Rating
from projects.models import Project


def rating_counted(project_id: int, annotator_id: int, when: datetime) -> None:
    """One more rating made by the annotator on `when`'s local day. Call inside the rating's
    transaction: the count commits, or rolls back, with it."""
    key = {"project_id": project_id, "annotator_id": annotator_id, "day": timezone.localdate(when)}
    rows = AnnotatorDay.objects.filter(**key)
    if rows.update(ratings=F("ratings") + 1):
        return
    # The day's first rating: make the row (a concurrent first rating may just have made it),
    # then count, under the row lock the update takes.
    AnnotatorDay.objects.bulk_create([AnnotatorDay(**key)], ignore_conflicts=True)
    rows.update(ratings=F("ratings") + 1)


def annotator_days_rebuild(project: Project) -> int:
    """Recount a project's tallies from its ratings, for ratings written around the rating
    service (the benchmarks' bulk seeds); the number of rows."""
    with transaction.atomic():
        AnnotatorDay.objects.filter(project=project).delete()
        counts = (
            Rating.objects.filter(pair__project=project, imported=False)
            .annotate(day=TruncDate("created_at"))
            .values("annotator", "day")
            .annotate(n=Count("id"))
            .order_by()
        )
        rows = AnnotatorDay.objects.bulk_create(
            AnnotatorDay(
                project=project, annotator_id=row["annotator"], day=row["day"], ratings=row["n"]
            )
            for row in counts
        )
    return len(rows)
