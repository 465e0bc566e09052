"""A lead pauses an annotator in one task from their page, saying why: the queue
closes until a lead re-admits them, their ratings stay, and nobody else can pause anyone."""

import pytest
from django.urls import reverse

from annotation.models import AnnotatorPause
from annotation.services.assignments import assignment_claim
from projects.models import Membership
from tests.annotator_page.test_annotator_page import _text
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def team(tmp_path):
    task = queued_pairs(tmp_path, project_slug="small", count=3)
    annotator = member("ann", task.project)
    lead = member("boss", task.project, role=Membership.Role.LEAD)
    return task, annotator, lead


def _pause_url(task, user) -> str:
    return reverse("dash-pause", args=[task.project.slug, task.slug, user.pk])


def test_a_lead_pauses_an_annotator_saying_why_and_re_admits_them(client, team):
    task, annotator, lead = team
    client.force_login(lead)
    page = reverse("dash-annotator", args=[task.project.slug, annotator.pk])
    pause = _pause_url(task, annotator)
    assert f'action="{pause}"' in client.get(page).content.decode()

    assert client.post(pause, {"reason": "   "}).url == f"{page}#quality"
    assert not AnnotatorPause.objects.exists()  # a pause says why
    assert "Not paused: Say why" in _text(client.get(page))

    assert client.post(pause, {"reason": "rates without\nreading the prompt"}).status_code == 302
    held = AnnotatorPause.objects.get(annotator=annotator, readmitted_at__isnull=True)
    assert held.paused_by == lead and held.reason == "rates without reading the prompt"
    assert assignment_claim(annotator, task) is None  # no new pair
    shown = _text(client.get(page))
    assert "Paused in" in shown and "by boss: rates without reading the prompt" in shown
    client.post(pause, {"reason": "again"})  # already paused: nothing new
    assert AnnotatorPause.objects.count() == 1

    readmit = reverse("dash-readmit", args=[task.project.slug, task.slug, annotator.pk])
    client.post(readmit, {"back": "annotator"})
    assert assignment_claim(annotator, task) is not None


def test_only_the_projects_leads_pause_and_only_its_annotators(client, team, tmp_path):
    task, annotator, lead = team
    other = queued_pairs(tmp_path, project_slug="other", count=1)
    other_lead = member("other-lead", other.project, role=Membership.Role.LEAD)
    stranger = member("stranger", other.project)
    reason = {"reason": "because"}
    missing = reverse("dash-pause", args=[task.project.slug, task.slug, 999_999])
    for user in (other_lead, annotator):  # another project's lead; the annotator themselves
        client.force_login(user)
        assert client.post(_pause_url(task, annotator), reason).status_code == 404
        assert client.post(missing, reason).status_code == 404
    client.force_login(lead)
    assert client.post(_pause_url(task, stranger), reason).status_code == 404  # not ours
    assert client.post(_pause_url(task, lead), reason).url.endswith("#quality")  # a lead
    assert client.get(_pause_url(task, annotator)).status_code == 405  # a form's POST only
    assert not AnnotatorPause.objects.exists()
