"""A lead's actions record who took them: the dashboard pages that take them (decide a pair,
send it to one more annotator, make it a gold check, pause or re-admit an annotator, a bulk
action of the pair browser) send a visitor who is not signed in to the sign-in page before
anything changes; the same posts by the project's lead do change it, so the refusal is the
missing account's, not a bad form's."""

import pytest
from django.conf import settings
from django.shortcuts import resolve_url
from django.urls import reverse

from annotation.models import Adjudication, AnnotatorPause, GoldAnswer, Qualification
from content.models import Pair
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def site(tmp_path):
    task = queued_pairs(tmp_path, count=4)
    lead = member("lead", task.project, role="lead")
    annotator = member("annotator", task.project)
    return task, lead, annotator


def _posts(task, annotator) -> list[tuple[str, dict[str, object]]]:
    first, second, third, fourth = Pair.objects.filter(task=task).order_by("id")
    slug = task.project.slug
    return [
        (
            reverse("dash-pair-decide", args=[slug, first.pk]),
            {"decision": "drop", "note": "broken image"},
        ),
        (
            reverse("dash-pair-decide", args=[slug, second.pk]),
            {"action": "annotator", "note": "one more look"},
        ),
        (reverse("dash-pair-gold", args=[slug, third.pk]), {"side": "A"}),
        (
            reverse("dash-pause", args=[slug, task.slug, annotator.pk]),
            {"reason": "too fast"},
        ),
        (
            reverse("dash-pairs-bulk", args=[slug]),
            {
                "action": "drop",
                "scope": "selected",
                "pair": [fourth.pk],
                "confirm": "1",
                "note": "broken image",
            },
        ),  # fmt: skip
    ]


def _written(task) -> tuple[int, int, int, int]:
    return (
        Adjudication.objects.count(),
        Pair.objects.filter(task=task, extra_annotators__gt=0).count(),
        GoldAnswer.objects.count(),
        AnnotatorPause.objects.count(),
    )


def test_a_visitor_who_is_not_signed_in_is_sent_to_sign_in_and_changes_nothing(client, site):
    task, _lead, annotator = site
    sign_in = resolve_url(settings.LOGIN_URL)
    for url, data in _posts(task, annotator):
        response = client.post(url, data)
        assert response.status_code == 302, url
        assert response["Location"].startswith(sign_in), url
    assert _written(task) == (0, 0, 0, 0)
    assert set(Pair.objects.filter(task=task).values_list("status", flat=True)) == {
        Pair.Status.QUEUED
    }


def test_a_visitor_who_is_not_signed_in_cannot_readmit_an_annotator(client, site):
    task, _lead, annotator = site
    AnnotatorPause.objects.create(task=task, annotator=annotator, reason="too fast")
    Qualification.objects.create(
        task=task, annotator=annotator, correct=0, answered=3, passed=False
    )
    url = reverse("dash-readmit", args=[task.project.slug, task.slug, annotator.pk])
    response = client.post(url)
    assert response.status_code == 302
    assert response["Location"].startswith(resolve_url(settings.LOGIN_URL))
    assert AnnotatorPause.objects.get().readmitted_at is None
    assert not Qualification.objects.get().passed


def test_the_same_posts_by_the_projects_lead_take_effect(client, site):
    task, lead, annotator = site
    client.force_login(lead)
    for url, data in _posts(task, annotator):
        assert client.post(url, data).status_code in (200, 302), url
    adjudications, reopened, golds, pauses = _written(task)
    assert (adjudications, reopened, golds, pauses) == (2, 1, 1, 1)
    assert AnnotatorPause.objects.get().paused_by == lead
    Qualification.objects.create(
        task=task, annotator=annotator, correct=0, answered=3, passed=False
    )
    client.post(reverse("dash-readmit", args=[task.project.slug, task.slug, annotator.pk]))
    assert AnnotatorPause.objects.get().readmitted_by == lead
    assert Qualification.objects.get().admitted_by == lead
