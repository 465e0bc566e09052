"""The annotator's home page reads the gold checks ahead of every task in a fixed number of
queries (it read each task's gold history in turn: one or two queries per task)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.utils import timezone

from annotation.gold.services import GoldEntry, gold_set
from annotation.selectors.progress import annotator_progress
from content.models import Pair
from projects.models import Task
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def _gold_tasks(tmp_path, count: int):
    tasks = []
    for number in range(count):
        task = queued_pairs(tmp_path, project_slug="golds", task_slug=f"t{number}", count=6)
        Task.objects.filter(pk=task.pk).update(gold_rate=0.5)
        pair = Pair.objects.filter(task=task).order_by("id").first()
        gold_set(task, [GoldEntry(pair.external_id, "A", "")])
        tasks.append(Task.objects.get(pk=task.pk))
    return tasks


def _queries(user, tasks) -> tuple[int, list]:
    with CaptureQueriesContext(connection) as captured:
        progress = annotator_progress(user, tasks, timezone.now())
    return len(captured), progress


def test_gold_ahead_costs_the_same_queries_for_one_task_or_five(tmp_path):
    tasks = _gold_tasks(tmp_path, 5)
    user = member("reader", tasks[0].project)
    one, [first] = _queries(user, tasks[:1])
    five, progress = _queries(user, tasks)
    assert one == five
    # Five queued pairs and the gold check ahead of them, in every task.
    assert [p.remaining for p in progress] == [6] * 5 and first.remaining == 6
