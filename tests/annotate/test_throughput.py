"""The overview's throughput: ratings counted per annotator and local day as they land."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.models import AnnotatorDay
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from annotation.services.throughput import annotator_days_rebuild
from dashboards.selectors.overview import overview
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def _days(project) -> dict:
    return {
        (user, day): n
        for user, day, n in AnnotatorDay.objects.filter(project=project).values_list(
            "annotator__username", "day", "ratings"
        )
    }


def test_a_rating_counts_on_its_day_and_a_correction_does_not_count_again(tmp_path):
    task = queued_pairs(tmp_path, count=4)
    user = member("ann", task.project)
    now = timezone.now()
    yesterday = now - timedelta(days=1)
    earlier = assignment_claim(user, task, now=yesterday)
    rating_submit(earlier.pk, user, RatingInput(overall=2), now=yesterday)
    for _ in range(2):
        current = assignment_claim(user, task, now=now)
        rating_submit(current.pk, user, RatingInput(overall=3), now=now)
    rating_submit(current.pk, user, RatingInput(overall=6), now=now)  # a correction

    today, before = timezone.localdate(now), timezone.localdate(yesterday)
    assert _days(task.project) == {("ann", before): 1, ("ann", today): 2}
    monday = today - timedelta(days=today.weekday())
    week = 3 if before >= monday else 2
    assert overview(task.project)["throughput"] == [
        {"annotator_id": user.pk, "annotator": "ann", "today": 2, "week": week}
    ]


def test_a_recount_from_the_ratings_gives_the_counts_made_as_they_landed(tmp_path):
    task = queued_pairs(tmp_path, count=5)
    for name, pairs in (("ann1", 3), ("ann2", 2)):
        user = member(name, task.project)
        for score in range(pairs):
            assignment = assignment_claim(user, task)
            rating_submit(assignment.pk, user, RatingInput(overall=score + 1))
    counted = _days(task.project)
    assert sorted(counted.values()) == [2, 3]
    AnnotatorDay.objects.filter(project=task.project).update(ratings=0)
    assert annotator_days_rebuild(task.project) == 2
    assert _days(task.project) == counted
