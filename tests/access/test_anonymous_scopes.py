"""The access policy answered an anonymous visitor with a TypeError (a filter on a user that is
not a row): every scope of one is empty, and a project or task lookup is the 404 of one that
does not exist."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.http import Http404

from projects import access
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def test_an_anonymous_visitor_reaches_no_project_and_no_task(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    project = task.project
    member("someone", project, role="lead")
    nobody = AnonymousUser()
    assert not access.memberships_of(nobody).exists()
    assert not access.member_projects(nobody).exists()
    assert not access.led_projects(nobody).exists()
    assert not access.is_lead_anywhere(nobody)
    assert not access.annotatable_tasks(nobody).exists()
    assert not access.visible_tasks(nobody).exists()
    with pytest.raises(Http404):
        access.project_for_lead(nobody, project.slug)
    with pytest.raises(Http404):
        access.task_for_annotator(nobody, project.slug, task.slug)
