"""The judges table's Average: over every task with labelled pairs, empty (with its coverage)
for a judge missing one of them, as `report --json` says."""

import pytest
from django.core.cache import cache
from django.urls import reverse

from content.models import Pair
from metrics.report import project_report
from tests.factories import queued_pairs

pytestmark = pytest.mark.django_db(transaction=True)


def test_a_judge_without_a_figure_on_every_task_has_no_average(client, rated, tmp_path):
    project, lead = rated  # both judges answered on t2i only
    edit = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=2)
    Pair.objects.filter(task=edit).update(status=Pair.Status.KEPT, label="A")
    cache.clear()
    client.force_login(lead)
    page = client.get(reverse("dash-judges", args=[project.slug]))
    assert page.context["labelled_tasks"] == 2
    report = project_report(project)["judges"]
    for row in page.context["table"]:
        assert row["cells"][1] is None or row["cells"][0] is None  # one task each
        assert (row["average"], row["covered"]) == (None, 1)
        assert report[row["judge"]] == {
            "average": None, "tasks": 1, "labelled_tasks": 2, "prediction_powered": None,
        }  # fmt: skip
    assert (page.context["human_average"], page.context["human_covered"]) == (None, 1)
    body = page.content.decode()
    assert body.count("1 of 2 tasks") == 5  # two judges in the table and the chart, experts
    assert "always-a (1 of 2 tasks)" in body  # the chart says why there is no bar


def test_a_judge_with_every_task_has_its_average_and_coverage(client, rated):
    project, lead = rated
    client.force_login(lead)
    page = client.get(reverse("dash-judges", args=[project.slug]))
    report = project_report(project)["judges"]
    for row in page.context["table"]:
        assert row["average"] == pytest.approx(row["cells"][0]["accuracy"])
        assert row["covered"] == report[row["judge"]]["tasks"] == 1
    assert page.content.decode().count("1 of 1 task<") >= 2
