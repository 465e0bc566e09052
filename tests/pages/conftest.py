"""A lead's site for the browser tests of the pages (accessibility, narrow screens): the
dashboards' rated project (tests/dashboards/conftest.py) with an export, a judge of the
project's own, and the right to create projects, so every page has something to show."""

import pytest
from django.contrib.auth.models import Permission

from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from exports.jobs import export_job_start
from judging.models import Judge
from projects.models import Membership, Task
from projects.services.api_tokens import api_token_create, api_token_revoke
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.factories import queued_pairs


@pytest.fixture
def lead_site(rated):  # noqa: F811
    project, lead = rated
    export_job_start(project, lead)  # runs in-process: the exports page lists a done job
    Judge.objects.create(name="local-coin", backend="random", project=project)
    lead.user_permissions.add(Permission.objects.get(codename="add_project"))
    # The API tokens page lists one in use (this project only, read-only) and one ended.
    api_token_create(user=lead, name="nightly export", access="read", project=project)
    ended = api_token_create(user=lead, name="old pipeline")
    api_token_revoke(user=lead, token_id=ended.token.pk)
    return project, lead


@pytest.fixture
def annotator(rated, tmp_path):  # noqa: F811
    """An annotator whose home page lists three tasks in two projects: one done (the rated
    project's), one to continue (with a long name), one to start."""
    project, _ = rated
    user = project.memberships.get(user__username="ann1").user
    second = queued_pairs(tmp_path, project_slug="second", task_slug="t2i", count=3)
    Task.objects.filter(pk=second.pk).update(
        name="Text to image, with the long name a lead may well give a task"
    )
    queued_pairs(tmp_path, project_slug="second", task_slug="edit", count=2)
    Membership.objects.create(user=user, project=second.project, role=Membership.Role.ANNOTATOR)
    rating_submit(assignment_claim(user, second).pk, user, RatingInput(overall=3, active_seconds=5))
    return user
