"""A small rated project for the dashboard tests: 8 pairs, 3 annotators who rated all of them,
one judge run in two samples, one flag."""

import pytest

from annotation.services.assignments import assignment_claim, assignment_flag
from annotation.services.ratings import RatingInput, rating_submit
from judging.models import Judge
from judging.services.runs import judge_run_start
from projects.models import Membership
from tests.factories import member, queued_pairs

# Form scores per annotator for pairs 1..8, in Left/Right orientation.
FORM_SCORES = {
    "ann1": [1, 2, 7, 4, 1, 6, 2, 3],
    "ann2": [2, 1, 6, 5, 7, 7, 1, 3],
    "ann3": [1, 3, 7, 3, 4, 6, 2, 5],
}


@pytest.fixture
def rated(tmp_path, tasks_in_process):
    task = queued_pairs(tmp_path, count=8)
    project = task.project
    flagger = member("flagger", project)
    assignment_flag(assignment_claim(flagger, task).pk, flagger, "broken", "black image")
    for name, scores in FORM_SCORES.items():
        user = member(name, project)
        for score in scores:
            assignment = assignment_claim(user, task)
            rating_submit(assignment.pk, user, RatingInput(overall=score, active_seconds=10))
    judge_run_start(Judge.objects.create(name="coin", backend="random"), project, samples=3)
    judge_run_start(Judge.objects.create(name="always-a", backend="always-a"), project)
    lead = member("boss", project, role=Membership.Role.LEAD)
    return project, lead
