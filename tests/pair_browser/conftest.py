"""The pair browser's data: the dashboards' rated project (8 complete pairs of task t2i rated
by ann1..ann3, one flag, judges coin and always-a), a second task of 4 pairs nobody rated (2
candidates with an imported label A), and a second project with its own lead."""

import pytest

from content.models import Pair
from projects.models import Membership
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.factories import member, queued_pairs


@pytest.fixture
def browsed(rated, tmp_path):  # noqa: F811
    project, lead = rated
    edit = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=4)
    fresh = list(Pair.objects.filter(task=edit).order_by("pk"))
    Pair.objects.filter(pk__in=[p.pk for p in fresh[:2]]).update(
        status=Pair.Status.CANDIDATE, reference_label="A"
    )
    return project, lead


@pytest.fixture
def other_project(tmp_path):
    """A second project, its pairs and its own lead."""
    task = queued_pairs(tmp_path, project_slug="other", task_slug="t2i", count=3)
    lead = member("other-lead", task.project, role=Membership.Role.LEAD)
    return task.project, lead
