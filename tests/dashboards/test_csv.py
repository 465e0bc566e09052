"""Every dashboard table downloads as CSV with the numbers of the page, for leads only."""

import csv
import io
import re

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from dashboards.tables import TABLES
from metrics.report import project_report

pytestmark = pytest.mark.django_db(transaction=True)  # the judge runs start on commit

PAGES = {
    "overview": "dash-overview",
    "agreement": "dash-agreement",
    "disagreements": "dash-disagreements",
    "judges": "dash-judges",
    "models": "dash-models",
}


def _rows(answer) -> list[list[str]]:
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/csv")
    return list(csv.reader(io.StringIO(answer.content.decode())))


@pytest.mark.parametrize(
    ("page", "table"), [(page, table) for page in PAGES for table in TABLES[page]]
)
def test_each_table_is_linked_and_downloads(client, rated, page, table):
    project, lead = rated
    client.force_login(lead)
    url = reverse(PAGES[page], args=[project.slug])
    html = client.get(url).content.decode()
    assert f"format=csv&amp;table={table}" in html
    rows = _rows(client.get(url, {"format": "csv", "table": table}))
    assert len(rows) >= 2 and all(len(row) == len(rows[0]) for row in rows)


def test_the_judges_csv_holds_the_reports_accuracies(client, rated):
    project, lead = rated
    client.force_login(lead)
    rows = _rows(
        client.get(
            reverse("dash-judges", args=[project.slug]), {"format": "csv", "table": "accuracy"}
        )
    )
    report = project_report(project)["tasks"]["t2i"]["judges"]
    by_judge = {row[0]: float(row[2]) for row in rows[1:] if row[1] == "t2i"}
    assert by_judge == pytest.approx({name: f["accuracy"] for name, f in report.items()}, abs=1e-6)


def test_the_disagreements_csv_keeps_the_pages_filters(client, rated):
    project, lead = rated
    client.force_login(lead)
    url = reverse("dash-disagreements", args=[project.slug])
    html = client.get(url, {"reason": "span"}).content.decode()
    link = re.search(r'href="(\?[^"]*table=pairs[^"]*)"', html).group(1)
    assert "reason=span" in link
    everything = _rows(client.get(url, {"format": "csv", "table": "pairs"}))
    span_only = _rows(client.get(url, {"format": "csv", "table": "pairs", "reason": "span"}))
    assert 1 < len(span_only) <= len(everything)


def test_unknown_tables_and_strangers_get_404(client, rated, tmp_path):
    from tests.factories import member, queued_pairs

    project, lead = rated
    client.force_login(lead)
    url = reverse("dash-judges", args=[project.slug])
    assert client.get(url, {"format": "csv", "table": "nope"}).status_code == 404
    stranger = member("stranger", queued_pairs(tmp_path, project_slug="x", count=1).project, "lead")
    client.force_login(stranger)
    assert client.get(url, {"format": "csv", "table": "accuracy"}).status_code == 404
    client.force_login(User.objects.get(username="ann1"))
    assert client.get(url, {"format": "csv", "table": "accuracy"}).status_code == 403
