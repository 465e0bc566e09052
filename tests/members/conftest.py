import pytest
from django.core.cache import cache

from projects.models import Task
from tests.factories import queued_pairs

PASSWORD = "violet-harbour-lantern-42"  # passes Django's password validators


@pytest.fixture(autouse=True)
def _fresh_limits():
    """The invitation page's counters live in the cache, like the sign-in limits."""
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, project_slug="team", task_slug="t2i", count=3)


@pytest.fixture
def project(task):
    return task.project


@pytest.fixture
def other_task(project):
    return Task.objects.create(project=project, slug="edit", name="Editing <b>", kind="edit")
