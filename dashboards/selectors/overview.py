"""The project overview: progress per task, throughput, flags, judge runs."""

from collections import defaultdict
from datetime import timedelta
from typing import Any

from django.db.models import Count, Q, Sum
from django.utils import timezone

from annotation.models import AnnotatorDay, Flag
from content.models import Pair
from dashboards.selectors.pool import stuck_pairs
from judging.selectors import runs_with_tallies
from projects.models import Project

# "Complete" is left out: nothing assigns it (consensus decides a pair, kept or dropped, with its
# last rating), so its column would always say 0. A pair that has it anyway (old data) brings
# the column back, so the totals always add up.
STATUSES = [value for value, _label in Pair.Status.choices if value != Pair.Status.COMPLETE]


def overview(project: Project) -> dict[str, Any]:
    now = timezone.localtime()
    today = now.replace(hour=0, minute=0, second=0, microsecond=0)
    week = today - timedelta(days=today.weekday())
    tasks = list(project.tasks.order_by("slug"))
    counts: defaultdict[int, dict[str, int]] = defaultdict(dict)
    rows = Pair.objects.filter(project=project).values_list("task_id", "status")
    for task_id, status, n in rows.annotate(n=Count("id")).order_by():
        counts[task_id][status] = n
    present = {status for by_status in counts.values() for status in by_status}
    shown = [
        value for value, _label in Pair.Status.choices if value in STATUSES or value in present
    ]
    by_task = [
        {
            "task": task,
            "statuses": [counts[task.pk].get(status, 0) for status in shown],
            "total": sum(counts[task.pk].values()),
        }
        for task in tasks
    ]
    throughput = (
        AnnotatorDay.objects.filter(project=project, day__gte=week.date())
        .values("annotator", "annotator__username")
        .annotate(week=Sum("ratings"), today=Sum("ratings", filter=Q(day=today.date()), default=0))
        .order_by("-week", "annotator__username")
    )
    flags = Flag.objects.filter(pair__project=project, resolved_at__isnull=True)
    return {
        "statuses": [Pair.Status(value).label for value in shown],
        "by_task": by_task,
        "totals": [sum(row["statuses"][i] for row in by_task) for i in range(len(shown))],
        "total": sum(row["total"] for row in by_task),
        "throughput": [
            {
                "annotator_id": row["annotator"],
                "annotator": row["annotator__username"],
                "today": row["today"],
                "week": row["week"],
            }
            for row in throughput
        ],
        "open_flags": flags.count(),
        "recent_flags": list(flags.select_related("pair", "reported_by")[:10]),
        "runs": runs_with_tallies(project, limit=10),
        "stuck": stuck_pairs(project),
    }
