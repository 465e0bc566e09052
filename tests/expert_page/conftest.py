"""An expert with known work in a small project (scale 7, grace 10 minutes): ratings on three
days with chosen active times, one gold check answered a day ago (final), one answered just now
(still correctable), one qualification answer (final at once), one gold pair handed out and
not answered; and a colleague who rated some of the same pairs."""

from dataclasses import dataclass
from datetime import datetime, timedelta

import pytest
from django.utils import timezone

from annotation.gold.services import GoldEntry, gold_set
from annotation.models import Assignment, Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from projects.models import Project, Task
from projects.scale import to_form
from tests.factories import member, queued_pairs

# Active seconds of the expert's ordinary ratings, by days ago.
SECONDS = {2: [1800, 1800], 1: [360, 720, 1080], 0: [900]}
FINAL_GOLD_SECONDS, FRESH_GOLD_SECONDS, QUALIFYING_SECONDS = 100, 50, 70
# Pairs 6..8 become gold checks; six of the other seven are rated as ordinary pairs, and the
# one nobody rated becomes the qualification pair.
FINAL, FRESH, PENDING = 6, 7, 8
FINAL_EXPLANATION = "<b>Right</b> keeps the horizon & the sun"
FRESH_EXPLANATION = "fresh-secret: the one just answered"
PENDING_EXPLANATION = "pending-secret: nobody answered it"


def rate_at(user, assignment: Assignment, canonical: int, seconds: float, when: datetime):
    """Rate as the expert would have at `when`: the service counts the day from `when`;
    the row's created_at (auto_now_add, what the hours read) is moved to it as well."""
    shown = to_form(canonical, 7, assignment.swapped)
    data = RatingInput(overall=shown, active_seconds=seconds)
    rating = rating_submit(assignment.pk, user, data, now=when)
    Rating.objects.filter(pk=rating.pk).update(created_at=when)
    return rating


def ordinary_ratings(user, task: Task, seconds_by_days_ago: dict[int, list[float]], now):
    for days_ago, seconds in seconds_by_days_ago.items():
        when = now - timedelta(days=days_ago)
        for value in seconds:
            assignment = assignment_claim(user, task, now=when)
            rate_at(user, assignment, 5, value, when)


def gold_pair(task: Task, index: int) -> Pair:
    return Pair.objects.get(task=task, external_id__startswith=f"{task.slug}-{index}-")


@dataclass
class ExpertWork:
    project: Project
    task: Task
    expert: object
    colleague: object
    now: datetime
    final: Assignment  # answered a day ago: final
    fresh: Assignment  # answered just now: correctable for the grace period
    pending: Assignment  # handed out, not answered
    qualifying: Assignment  # a qualification answer: final at once


@pytest.fixture
def expert_work(tmp_path) -> ExpertWork:
    task = queued_pairs(tmp_path, project_slug="mine", count=10)
    project = task.project
    gold = {index: gold_pair(task, index) for index in (FINAL, FRESH, PENDING)}
    gold_set(
        task,
        [
            GoldEntry(gold[FINAL].external_id, "A", FINAL_EXPLANATION),
            GoldEntry(gold[FRESH].external_id, "B", FRESH_EXPLANATION),
            GoldEntry(gold[PENDING].external_id, "A", PENDING_EXPLANATION),
        ],
        rate=0,  # handed out by hand below
    )
    task.refresh_from_db()
    expert, colleague = member("expert", project), member("colleague", project)
    now = timezone.now()
    ordinary_ratings(expert, task, SECONDS, now)
    ordinary_ratings(colleague, task, {0: [5, 5, 5]}, now)

    yesterday = now - timedelta(days=1)
    final = Assignment.objects.create(pair=gold[FINAL], annotator=expert, swapped=True)
    rate_at(expert, final, 2, FINAL_GOLD_SECONDS, yesterday)  # B, where A was expected
    colleague_final = Assignment.objects.create(pair=gold[FINAL], annotator=colleague)
    rate_at(colleague, colleague_final, 7, 10, yesterday)
    fresh = Assignment.objects.create(pair=gold[FRESH], annotator=expert)
    rate_at(expert, fresh, 1, FRESH_GOLD_SECONDS, now)
    pending = Assignment.objects.create(
        pair=gold[PENDING], annotator=expert, lease_expires_at=now + timedelta(minutes=30)
    )
    # The qualification pair is made gold after the queue was worked (it would come first):
    # the pair the queue had not served yet (in the order of the pairs' draws).
    qualifying_pair = Pair.objects.get(task=task, status="queued", assignments__isnull=True)
    gold_set(task, [GoldEntry(qualifying_pair.external_id, "B", "B follows the prompt", True)])
    qualifying = Assignment.objects.create(pair=qualifying_pair, annotator=expert, swapped=False)
    rate_at(expert, qualifying, 1, QUALIFYING_SECONDS, now)  # B much better: as expected
    return ExpertWork(project, task, expert, colleague, now, final, fresh, pending, qualifying)
