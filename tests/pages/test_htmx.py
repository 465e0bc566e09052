"""Pages htmx also fetches in part (core/htmx.py): a fragment for an htmx request, the
whole page for a plain visit and for a history restore, and `Vary: HX-Request` on both so
no cache hands one to the other."""

import pytest
from django.urls import reverse

from annotation.services.assignments import assignment_claim
from judging.models import Judge, JudgeRun
from projects.models import Membership
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

HTMX = {"HTTP_HX_REQUEST": "true"}
RESTORE = {**HTMX, "HTTP_HX_HISTORY_RESTORE_REQUEST": "true"}


@pytest.fixture
def pages(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    project = task.project
    annotator = member("expert", project)
    lead = member("chief", project, role=Membership.Role.LEAD)
    coin = Judge.objects.create(name="coin", backend="random")
    run = JudgeRun.objects.create(judge=coin, project=project, trials=4, status="running")
    assignment = assignment_claim(annotator, task)
    return [
        (annotator, reverse("annotate", args=[assignment.pk])),
        (lead, reverse("run-detail", args=[project.slug, run.pk])),
        (lead, reverse("dash-exports", args=[project.slug])),
    ]


def test_fragment_for_htmx_whole_page_otherwise_and_on_history_restore(client, pages):
    for user, url in pages:
        client.force_login(user)
        for headers, whole in (({}, True), (HTMX, False), (RESTORE, True)):
            response = client.get(url, **headers)
            assert response.status_code == 200, url
            assert ("<html" in response.content.decode()) is whole, (url, headers)
            assert "HX-Request" in response["Vary"], url
