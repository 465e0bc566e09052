"""A lead's actions record who took them: the services that the pages call with the request's
user refuse a visitor who is not signed in (403) before they change anything, rather than fail
on the record they would write."""

import pytest
from django.contrib.auth.models import AnonymousUser
from django.core.exceptions import PermissionDenied

from annotation.gold.qualification import qualification_admit
from annotation.gold.services import GoldEntry, annotator_pause, annotator_readmit, gold_set
from annotation.models import AnnotatorPause, GoldAnswer, Qualification
from annotation.services.adjudication import pair_adjudicate, pair_request_annotator
from annotation.services.pair_bulk import pair_bulk_apply
from content.models import Pair
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def test_a_visitor_who_is_not_signed_in_cannot_pause_or_readmit_an_annotator(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    annotator = member("annotator", task.project)
    with pytest.raises(PermissionDenied):
        annotator_pause(task, annotator.pk, by=AnonymousUser(), reason="too fast")
    assert not AnnotatorPause.objects.exists()
    AnnotatorPause.objects.create(task=task, annotator=annotator, reason="too fast")
    with pytest.raises(PermissionDenied):
        annotator_readmit(task, annotator.pk, by=AnonymousUser())
    assert AnnotatorPause.objects.get().readmitted_at is None


def test_a_visitor_who_is_not_signed_in_cannot_admit_after_a_failed_qualification(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    annotator = member("annotator", task.project)
    Qualification.objects.create(
        task=task, annotator=annotator, correct=0, answered=3, passed=False
    )
    with pytest.raises(PermissionDenied):
        qualification_admit(task, annotator.pk, by=AnonymousUser())
    assert not Qualification.objects.get().passed


def test_a_visitor_who_is_not_signed_in_cannot_set_gold_checks(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    pair = Pair.objects.filter(task=task).first()
    with pytest.raises(PermissionDenied):
        gold_set(task, [GoldEntry(pair.external_id, "A")], by=AnonymousUser())
    assert not GoldAnswer.objects.exists()


def test_a_visitor_who_is_not_signed_in_cannot_decide_or_reopen_pairs(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    pair = Pair.objects.filter(task=task).first()
    with pytest.raises(PermissionDenied):
        pair_adjudicate(pair.pk, AnonymousUser(), "drop", "broken image")
    with pytest.raises(PermissionDenied):
        pair_request_annotator(pair.pk, AnonymousUser(), "one more look")
    with pytest.raises(PermissionDenied):
        pair_bulk_apply(
            project=task.project,
            lead=AnonymousUser(),
            action="drop",
            pair_ids=[pair.pk],
            note="broken image",
        )
    pair.refresh_from_db()
    assert (pair.status, pair.extra_annotators) == (Pair.Status.QUEUED, 0)
