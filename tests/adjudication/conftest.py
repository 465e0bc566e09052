"""A contested project with a known disagreement queue: 8 pairs rated by 3 annotators with the
canonical scores below (K = 7, centre 4, max span 4, ambiguous band 4 ± 0.5 and 0.5 beyond)."""

import pytest

from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from projects.models import Membership
from tests.factories import member, queued_pairs

# Canonical scores (above 4: A better) per pair number, one per annotator.
SCORES = {
    0: (1, 7, 7),  # span 6, mean 5.00: span and ambiguous
    1: (1, 5, 7),  # span 6, mean 4.33: span and ambiguous
    2: (1, 1, 6),  # span 5, mean 2.67: span only
    3: (2, 6, 4),  # span 4, mean 4.00: span and ambiguous
    4: (3, 4, 5),  # span 2, mean 4.00: ambiguous only
    5: (6, 7, 7),  # clear: not in the queue
    6: (4, 5, 3),  # span 2, mean 4.00: ambiguous only
    7: (1, 1, 2),  # clear: not in the queue
}
# The queue, most contested first (widest span, then mean nearest the centre, then id).
QUEUE = [1, 0, 2, 3, 4, 6]
BY_SPAN = [1, 0, 2, 3]
AMBIGUOUS = [1, 0, 3, 4, 6]


@pytest.fixture
def contested(tmp_path, tasks_in_process):
    """(project, lead, {pair number: pair id})."""
    task = queued_pairs(tmp_path, project_slug="contested", count=len(SCORES))
    project = task.project
    for n in range(3):
        user = member(f"expert{n}", project)
        for _ in SCORES:
            assignment = assignment_claim(user, task)
            number = int(assignment.pair.external_id.split("-")[1])
            canonical = SCORES[number][n]
            form = canonical if assignment.swapped else project.scale_points + 1 - canonical
            rating_submit(assignment.pk, user, RatingInput(overall=form, active_seconds=10))
    lead = member("chief", project, role=Membership.Role.LEAD)
    ids = {int(p.external_id.split("-")[1]): p.pk for p in project.pairs.all()}
    return project, lead, ids
