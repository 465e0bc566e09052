"""A small project whose figures are computed by hand in the tests: three experts rate four
pairs with chosen canonical scores (scale 7, centre 4), one of them also answers a gold check
and flags a pair."""

from datetime import timedelta

import pytest
from django.utils import timezone

from annotation.gold.services import GoldEntry, gold_assignment_create, gold_set
from annotation.services.assignments import assignment_claim, assignment_flag
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from projects.models import Membership
from projects.scale import to_form
from tests.factories import member, queued_pairs

# Canonical scores (above 4: A better) of pairs 0..3; pair 4 is a gold check, pair 5 is the
# one "xavier" flags (the others rate it at the centre).
SCORES = {
    "xavier": [6, 2, 4, 5],
    "yvonne": [5, 6, 1, 3],
    "zoe": [7, 6, 2, 5],
}
XAVIER_SECONDS = [10, 20, 30, 40]  # active seconds on pairs 0..3; 50 on the gold check
GOLD, FLAGGED = 4, 5


def _index(pair: Pair) -> int:
    return int(pair.external_id.split("-")[1])  # "t2i-<i>-..." (tests.factories)


def rate(user, assignment, canonical: int, seconds: float = 10):
    shown = to_form(canonical, 7, assignment.swapped)
    return rating_submit(assignment.pk, user, RatingInput(overall=shown, active_seconds=seconds))


@pytest.fixture
def experts(tmp_path):
    """(project, lead, {name: user}) of the small project described above."""
    task = queued_pairs(tmp_path, project_slug="small", count=6)
    project = task.project
    gold = Pair.objects.get(task=task, external_id__startswith=f"t2i-{GOLD}-")
    gold_set(task, [GoldEntry(gold.external_id, "A")], rate=0)  # handed out below, last
    task.refresh_from_db()
    users = {name: member(name, project) for name in SCORES}
    for name, user in users.items():
        while (assignment := assignment_claim(user, task)) is not None:
            index = _index(assignment.pair)
            if index == FLAGGED:
                if name == "xavier":
                    assignment_flag(assignment.pk, user, "broken", "black image")
                else:
                    rate(user, assignment, 4)
                continue
            seconds = XAVIER_SECONDS[index] if name == "xavier" else 10
            rate(user, assignment, SCORES[name][index], seconds)
    xavier = users["xavier"]
    answer = gold_assignment_create(xavier, gold.pk, timezone.now() + timedelta(hours=1))
    rate(xavier, answer, 2, seconds=50)  # B where A is expected: wrong
    lead = member("boss", project, role=Membership.Role.LEAD)
    return project, lead, users
