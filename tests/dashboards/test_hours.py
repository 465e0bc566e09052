"""Annotators' hours per day and in total, on the page and as CSV, for their leads only."""

import csv
import io
from datetime import timedelta

import pytest
from django.urls import reverse
from django.utils import timezone

from annotation.models import Rating
from dashboards.csv import csv_response

pytestmark = pytest.mark.django_db


def _csv(answer) -> list[list[str]]:
    return list(csv.reader(io.StringIO(answer.content.decode())))


def test_hours_per_day_and_in_total(client, rated):
    project, lead = rated
    ann1 = Rating.objects.filter(annotator__username="ann1").order_by("id")
    yesterday = timezone.now() - timedelta(days=1)
    Rating.objects.filter(pk__in=[r.pk for r in ann1[:3]]).update(
        created_at=yesterday, active_seconds=1800
    )  # 3 × 30 min yesterday; the other 5 ratings are 10 s each today
    Rating.objects.filter(pk=ann1[3].pk).update(imported=True)  # not paid here: left out
    client.force_login(lead)
    url = reverse("dash-hours", args=[project.slug])
    page = client.get(url).content.decode()
    assert "ann1" in page and "1.51" in page  # 1.5 h + 4 × 10 s

    rows = _csv(client.get(url + "?format=csv"))
    assert rows[0] == ["annotator", "day", "active_hours", "ratings_total"]
    ann1_rows = [row for row in rows if row[0] == "ann1"]
    today = timezone.localdate().isoformat()
    yesterday_day = timezone.localtime(yesterday).date().isoformat()
    assert [yesterday_day, "1.5000", ""] == ann1_rows[0][1:]
    assert [today, f"{40 / 3600:.4f}", ""] == ann1_rows[1][1:]
    assert ann1_rows[2][1:] == ["total", f"{(5400 + 40) / 3600:.4f}", "7"]


def test_only_the_projects_leads_see_the_hours(client, rated, tmp_path):
    from django.contrib.auth.models import User

    from tests.factories import member, queued_pairs

    project, _lead = rated
    stranger = member("stranger", queued_pairs(tmp_path, project_slug="x", count=1).project, "lead")
    url = reverse("dash-hours", args=[project.slug])
    client.force_login(stranger)
    assert client.get(url).status_code == 404
    assert client.get(url + "?format=csv").status_code == 404
    client.force_login(User.objects.get(username="ann1"))
    assert client.get(url).status_code == 403
    client.logout()
    assert client.get(url).status_code == 302


def test_csv_cells_never_run_as_formulas():
    answer = csv_response("x.csv", ["name"], [["=HYPERLINK(1)"], ["-3.5"], ["@cmd"], ["plain"]])
    assert _csv(answer)[1:] == [["'=HYPERLINK(1)"], ["-3.5"], ["'@cmd"], ["plain"]]
