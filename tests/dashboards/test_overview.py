"""The overview's tables: annotators by name, no always-zero status, totals that add up."""

import re

import pytest
from django.urls import reverse

from content.models import Pair

pytestmark = pytest.mark.django_db(transaction=True)


def _cells(row: str) -> list[str]:
    return [
        re.sub(r"<[^>]+>", "", cell).strip() for cell in re.findall(r"<t[dh][^>]*>.*?</t[dh]>", row)
    ]


def _table(body: str, heading: str) -> str:
    return body.split(f"<h2>{heading}", 1)[1].split("</table>", 1)[0]


def test_throughput_names_the_annotators(client, rated):
    project, lead = rated
    client.force_login(lead)
    page = client.get(reverse("dash-overview", args=[project.slug]))
    rows = {row["annotator"]: (row["today"], row["week"]) for row in page.context["throughput"]}
    assert rows == {"ann1": (8, 8), "ann2": (8, 8), "ann3": (8, 8)}
    table = _table(page.content.decode(), "Annotator throughput")
    names = [_cells(row)[0] for row in re.findall(r"<tr>.*?</tr>", table)[1:]]
    assert sorted(names) == ["ann1", "ann2", "ann3"]


def test_pairs_by_status_has_no_always_zero_column_and_a_grand_total(client, rated):
    project, lead = rated
    client.force_login(lead)
    body = client.get(reverse("dash-overview", args=[project.slug])).content.decode()
    table = _table(body, "Pairs by status")
    head = _cells(re.search(r"<thead>.*?</thead>", table, re.S).group(0))
    assert "Complete" not in head
    assert head[0] == "Task" and head[-1] == "Total"
    foot = _cells(re.search(r"<tfoot>.*?</tfoot>", table, re.S).group(0))
    assert foot[0] == "All tasks"
    assert foot[-1] == str(project.pairs.count()) == "8"
    assert sum(int(n) for n in foot[1:-1]) == 8


def test_a_pair_left_in_complete_brings_its_column_back(client, rated):
    project, lead = rated
    Pair.objects.filter(pk=project.pairs.order_by("pk").first().pk).update(
        status=Pair.Status.COMPLETE
    )
    client.force_login(lead)
    body = client.get(reverse("dash-overview", args=[project.slug])).content.decode()
    table = _table(body, "Pairs by status")
    head = _cells(re.search(r"<thead>.*?</thead>", table, re.S).group(0))
    foot = _cells(re.search(r"<tfoot>.*?</tfoot>", table, re.S).group(0))
    assert foot[head.index("Complete")] == "1"
    assert sum(int(n) for n in foot[1:-1]) == int(foot[-1]) == 8
