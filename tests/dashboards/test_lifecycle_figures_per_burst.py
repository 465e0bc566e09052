"""A burst of decisions (a bulk action, a settings change, an import) moves the dashboards'
figures once: their refresh is prepared once per burst, not once per decided pair."""

import pytest

from annotation.services.pair_bulk import pair_bulk_apply
from content.models import Pair
from dashboards import snapshots
from projects.models import Membership
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def test_a_bulk_drop_of_many_pairs_prepares_the_figures_once(
    tmp_path, settings, monkeypatch, django_capture_on_commit_callbacks
):
    settings.ARBITER_FIGURES_AHEAD = True
    prepared: list[int] = []
    monkeypatch.setattr(snapshots, "figures_prepare", lambda project: prepared.append(project.pk))
    task = queued_pairs(tmp_path, count=5)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    ids = list(Pair.objects.filter(task=task).values_list("pk", flat=True))
    with django_capture_on_commit_callbacks(execute=True):
        result = pair_bulk_apply(
            project=task.project, lead=lead, action="drop", pair_ids=ids, note="off-topic"
        )
    assert result.changed == 5
    assert Pair.objects.filter(task=task, status="dropped").count() == 5
    assert prepared == [task.project.pk]
