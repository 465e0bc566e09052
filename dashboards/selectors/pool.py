"""Open pairs the current pool of members can never finish: fewer people may still take them
than the ratings they lack. Nobody gets a pair twice (a skip, a flag or an expired lease used
a member's turn), and a member limited to some tasks only takes those."""

from collections import defaultdict
from typing import Any

from django.db.models import BooleanField, ExpressionWrapper
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.pairs import live_assignments
from content.lifecycle import OPEN_STATUSES
from content.models import Pair
from projects.access import members_by_task
from projects.models import Project

SHOWN = 20


def stuck_pairs(project: Project) -> dict[str, Any]:
    """{"count", "by_task": [(task, count)], "pairs": first SHOWN [(pair, short by)]}."""
    tasks = list(project.tasks.order_by("slug"))
    takers = members_by_task(project, tasks)  # task -> the members it is open to

    open_pairs = Pair.objects.filter(project=project, status__in=OPEN_STATUSES)
    had: dict[int, set[int]] = defaultdict(set)  # pair -> members who had it
    live: dict[int, int] = defaultdict(int)
    holds_slot = ExpressionWrapper(live_assignments(timezone.now()), BooleanField())
    rows = (
        Assignment.objects.filter(pair__in=open_pairs)
        .annotate(live=holds_slot)
        .values_list("pair_id", "annotator_id", "live")
    )
    for pair_id, user_id, is_live in rows:
        had[pair_id].add(user_id)
        live[pair_id] += bool(is_live)

    stuck: list[tuple[Pair, int]] = []  # (pair, how many ratings it cannot get)
    by_task: defaultdict[int, int] = defaultdict(int)
    needed_rows = open_pairs.select_related("task").order_by("task__slug", "id")
    for pair in needed_rows.only("id", "external_id", "task", "extra_annotators"):
        can_still = len(takers.get(pair.task_id, set()) - had[pair.pk])
        short = pair.ratings_needed(project) - live[pair.pk] - can_still
        if short > 0:
            by_task[pair.task_id] += 1
            stuck.append((pair, short))
    return {
        "count": len(stuck),
        "by_task": [(task, by_task[task.pk]) for task in tasks if by_task[task.pk]],
        "pairs": stuck[:SHOWN],
    }
