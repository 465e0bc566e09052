"""The lead's new pages read a fixed number of queries whatever the size of the project."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from imports.models import ImportJob
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

PAGES = ["project-data", "project-settings", "dash-hours", "dash-overview"]


def _count(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    return len(queries)


@pytest.mark.parametrize("page", PAGES)
def test_queries_do_not_grow_with_pairs_tasks_and_jobs(client, tmp_path, page):
    task = queued_pairs(tmp_path, project_slug="budget", count=2)
    project = task.project
    lead = member("boss", project, role="lead")
    client.force_login(lead)
    url = reverse(page, args=[project.slug])
    small = _count(client, url)
    queued_pairs(tmp_path, project_slug="budget", task_slug="edit", count=6)
    for i in range(5):
        member(f"a{i}", project)
        ImportJob.objects.create(
            project=project, task_slug="t2i", requested_by=lead, file_name=f"f{i}.zip"
        )
    assert _count(client, url) == small
    assert small <= 25
