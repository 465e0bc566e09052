"""The pair browser's pages through the Django test client: who reaches them, what a lead
finds there, bad values, the CSV, and the query budget whatever the page size."""

import csv
import io

import pytest
from django.test import Client
from django.urls import reverse

from content.models import Pair
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def url(project, **params) -> str:
    query = "&".join(f"{key}={value}" for key, value in params.items())
    return reverse("dash-pairs", args=[project.slug]) + (f"?{query}" if query else "")


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_lead_sees_every_pair_each_linking_to_its_page(browsed):
    project, lead = browsed
    response = signed_in(lead).get(url(project))
    assert response.status_code == 200
    body = response.content.decode()
    for pair in Pair.objects.filter(project=project):
        assert reverse("dash-pair", args=[project.slug, pair.pk]) in body
    assert "12 pairs match" in body
    assert 'aria-current="page">Pairs</a>' in body  # the project tab


def test_annotators_outsiders_and_another_projects_lead_get_the_404_of_no_project(
    browsed, other_project, client
):
    project, _ = browsed
    _, other_lead = other_project
    annotator = project.memberships.get(user__username="ann1").user
    outsider = member("outsider", other_project[0])
    for user in (annotator, outsider, other_lead):
        assert signed_in(user).get(url(project)).status_code == 404
    assert signed_in(other_lead).get(url(project, format="csv")).status_code == 404
    missing = reverse("dash-pairs", args=["no-such-project"])
    assert signed_in(other_lead).get(missing).status_code == 404
    assert client.get(url(project)).status_code == 302  # to the login page


def test_a_word_of_the_prompt_finds_its_pair(browsed):
    project, lead = browsed
    body = signed_in(lead).get(url(project, q="number+3", task="t2i")).content.decode()
    assert "1 pair matches" in body
    pair = Pair.objects.get(project=project, task__slug="t2i", external_id__contains="-3-")
    assert reverse("dash-pair", args=[project.slug, pair.pk]) in body


@pytest.mark.parametrize(
    "params",
    [
        {"ratings_min": "abc"},
        {"ratings_max": "9" * 40},
        {"page": "-1"},
        {"span_min": "²"},
        {"sort": "password"},
        {"judge": "1 OR 1=1"},
        {"task": "%3Cscript%3E"},
    ],
)
def test_a_bad_value_is_a_400_page_naming_the_field_never_a_500(browsed, params):
    project, lead = browsed
    response = signed_in(lead).get(url(project, **params))
    assert response.status_code == 400
    body = response.content.decode()
    assert "Some values are not valid" in body
    assert "<script>" not in body


def test_a_page_costs_the_same_queries_at_any_size(browsed, tmp_path, django_assert_num_queries):
    project, lead = browsed
    queued_pairs(tmp_path, project_slug=project.slug, task_slug="more", count=30)
    client = signed_in(lead)
    client.get(url(project))  # the session and the user are read once
    for size, rows in ((25, 25), (200, 41)):  # 42 pairs, one flagged
        # session, user, project, the form's tasks, members and judges, the lead's saved
        # views, count, the page's ids, its rows (prompts, responses, generators joined), its
        # images' sizes, and the notification bell of the base page
        with django_assert_num_queries(12):
            response = client.get(url(project, size=size, flagged="no", adjudicated="no"))
        assert response.status_code == 200
        assert response.content.decode().count('name="pair"') == rows


def test_the_page_size_splits_pages(browsed):
    project, lead = browsed
    body = signed_in(lead).get(url(project, size=25)).content.decode()
    assert "page 1 of" not in body
    response = signed_in(lead).get(url(project, sort="ratings", order="desc"))
    assert response.status_code == 200


def test_the_filtered_view_downloads_as_csv(browsed):
    project, lead = browsed
    response = signed_in(lead).get(url(project, task="edit", format="csv"))
    assert response.status_code == 200
    assert response.streaming
    assert response["Content-Type"].startswith("text/csv")
    rows = list(csv.reader(io.StringIO(b"".join(response.streaming_content).decode())))
    assert rows[0][:3] == ["pair_id", "external_id", "task"]
    assert sorted(row[1] for row in rows[1:]) == sorted(
        Pair.objects.filter(project=project, task__slug="edit").values_list(
            "external_id", flat=True
        )
    )


def test_a_csv_cell_a_spreadsheet_would_run_is_quoted(browsed):
    project, lead = browsed
    Pair.objects.filter(project=project).update(source="=HYPERLINK(1)")
    response = signed_in(lead).get(url(project, format="csv"))
    text = b"".join(response.streaming_content).decode()
    assert "'=HYPERLINK(1)" in text
