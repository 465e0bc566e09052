"""The lead's dashboards: access, figures equal to report --json, charts, query budgets."""

from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.cache import cache
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from metrics.report import project_report
from tests.factories import member, queued_pairs
from tests.responses import unmasked

pytestmark = pytest.mark.django_db(transaction=True)

PAGES = ["dash-overview", "dash-agreement", "dash-disagreements", "dash-judges", "dash-models"]


def test_every_dashboard_is_for_the_projects_leads_only(client, rated):
    project, lead = rated
    urls = [reverse(name, args=[project.slug]) for name in PAGES]
    urls.append(reverse("dash-pair", args=[project.slug, project.pairs.first().pk]))
    for url in urls:
        response = client.get(url)
        assert response.status_code == 302 and reverse("login") in response["Location"], url
    client.force_login(User.objects.get(username="ann1"))
    for url in urls:
        assert client.get(url).status_code == 403, url
    client.force_login(User.objects.create_user("stranger"))
    missing = client.get(reverse("dash-overview", args=["nope"]))
    for url in urls:  # a project they are not in answers like one that does not exist
        response = client.get(url)
        assert response.status_code == 404, url
        assert unmasked(response.content) == unmasked(missing.content), url
    client.force_login(lead)
    for url in urls:
        assert client.get(url).status_code == 200, url
    assert client.get(reverse("dash-overview", args=["nope"])).status_code == 404


def test_agreement_figures_are_those_of_the_report(client, rated):
    project, lead = rated
    report = project_report(project)["tasks"]["t2i"]["agreement"]
    client.force_login(lead)
    page = client.get(reverse("dash-agreement", args=[project.slug]))
    task = page.context["tasks"][0]
    assert task["alpha"]["ordinal"]["value"] == pytest.approx(report["alpha_ordinal"], abs=1e-6)
    assert task["alpha"]["interval"]["value"] == pytest.approx(report["alpha_interval"], abs=1e-6)
    assert task["unanimous"] == pytest.approx(report["unanimous_direction"], abs=1e-6)
    if report["rater_label_agreement"] is None:
        assert task["rla"] is None
    else:
        assert task["rla"] == pytest.approx(report["rater_label_agreement"], abs=1e-6)
    low, high = task["alpha"]["interval"]["interval"]
    assert low <= task["alpha"]["interval"]["value"] <= high
    names = {row["name"] for row in page.context["annotators"]}
    assert names == {"ann1", "ann2", "ann3"}
    body = page.content.decode()
    assert body.count("<svg") >= 2  # the score and span histograms (trends need 2 windows)


def test_judge_figures_are_those_of_the_report(client, rated):
    project, lead = rated
    report = project_report(project)
    client.force_login(lead)
    page = client.get(reverse("dash-judges", args=[project.slug]))
    rows = {row["judge"]: row for row in page.context["table"]}
    assert set(rows) == {"coin", "always-a"}
    for name, row in rows.items():
        expected = report["tasks"]["t2i"]["judges"][name]
        cell = row["cells"][0]
        for key in ("accuracy", "correct", "evaluated", "missing", "invalid", "ties"):
            assert cell[key] == pytest.approx(expected[key], abs=1e-6), (name, key)
        assert row["average"] == pytest.approx(report["judges"][name]["average"], abs=1e-6)
    assert len(rows["coin"]["majority"]) == 5 and rows["always-a"]["majority"] == []
    body = page.content.decode()
    assert "Experts, each against the others" in body and body.count('class="chart"') >= 2


def test_the_human_ceiling_is_each_expert_against_the_others(client, rated):
    project, lead = rated
    client.force_login(lead)
    page = client.get(reverse("dash-judges", args=[project.slug]))
    ceiling = page.context["humans"][0]
    # By hand: on each kept pair labelled A or B, each expert's side against the side of the
    # other two experts' mean (canonical scores, centre 4 on 7 points).
    labelled = set(
        Pair.objects.filter(project=project, status="kept", label__in=["A", "B"]).values_list(
            "pk", flat=True
        )
    )
    scores: dict = {}
    for pair_id, overall in Rating.objects.filter(pair_id__in=labelled).values_list(
        "pair_id", "overall"
    ):
        scores.setdefault(pair_id, []).append(overall)

    def side(total, count):
        return "A" if total > 4 * count else "B" if total < 4 * count else None

    matched = compared = 0
    for pair_scores in scores.values():
        for index, own in enumerate(pair_scores):
            others = pair_scores[:index] + pair_scores[index + 1 :]
            reference = side(sum(others), len(others))
            if reference is not None:
                compared += 1
                matched += side(own, 1) == reference
    assert compared > 0 and ceiling["compared"] == compared
    assert ceiling["accuracy"] == pytest.approx(matched / compared)
    assert ceiling["accuracy"] < 1  # a label built from their own ratings said 1.000
    low, high = ceiling["interval"] or (ceiling["accuracy"], ceiling["accuracy"])
    assert low <= ceiling["accuracy"] <= high  # a pair bootstrap: None below two pairs


def test_models_page_ranks_the_generators(client, rated):
    project, lead = rated
    client.force_login(lead)
    page = client.get(reverse("dash-models", args=[project.slug]))
    ranking = page.context["overall"]
    assert {r["generator"] for r in ranking} <= {"secretmodelA", "secretmodelB"}
    assert sum(r["wins"] for r in ranking) == page.context["games"]


def test_disagreements_list_contested_and_flagged_pairs(client, rated):
    project, lead = rated
    client.force_login(lead)
    page = client.get(reverse("dash-disagreements", args=[project.slug]))
    pairs = page.context["pairs"]
    assert pairs, "the fixture has disagreeing pairs"
    spans = [p.consensus_span for p in pairs if p.consensus_span is not None]
    assert spans == sorted(spans, reverse=True)
    flagged = client.get(reverse("dash-disagreements", args=[project.slug]) + "?reason=flagged")
    assert all(p.flagged for p in flagged.context["pairs"]) and flagged.context["total"] == 1


def test_the_pair_page_is_unblinded_for_leads(client, rated):
    project, lead = rated
    client.force_login(lead)
    pair = project.pairs.first()
    body = client.get(reverse("dash-pair", args=[project.slug, pair.pk])).content.decode()
    assert "secretmodelA" in body and "ann1" in body and "coin" in body


@pytest.mark.parametrize("name", PAGES)
def test_query_counts_do_not_grow_with_the_data(client, rated, name, tmp_path):
    project, lead = rated
    client.force_login(lead)
    url = reverse(name, args=[project.slug])
    cache.clear()
    with CaptureQueriesContext(connection) as small:
        client.get(url)
    more = member("late", project)
    other = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=3)
    for _ in range(3):
        assignment = assignment_claim(more, other)
        rating_submit(assignment.pk, more, RatingInput(overall=2))
    cache.clear()
    with CaptureQueriesContext(connection) as large:
        client.get(url)
    assert len(large) == len(small), [q["sql"][:120] for q in large.captured_queries]


def test_a_lead_decides_from_the_pair_page(client, rated):
    project, lead = rated
    client.force_login(lead)
    pair = project.pairs.order_by("id").first()
    url = reverse("dash-pair-decide", args=[project.slug, pair.pk])
    refused = client.post(url, {"decision": "drop", "note": ""}, follow=True)
    assert "note" in refused.content.decode().lower()
    client.post(url, {"decision": "keep_b", "note": "B follows the prompt"})
    pair.refresh_from_db()
    assert (pair.status, pair.label, pair.decided_by) == ("kept", "B", "adjudication")
    page = client.get(reverse("dash-pair", args=[project.slug, pair.pk])).content.decode()
    assert "B follows the prompt" in page and "boss" in page
    annotator = User.objects.get(username="ann1")
    client.force_login(annotator)
    assert client.post(url, {"decision": "keep_a", "note": "mine"}).status_code == 403


def test_filter_settings_are_changed_and_reapplied_from_the_page(client, rated):
    project, lead = rated
    client.force_login(lead)
    url = reverse("dash-filter-settings", args=[project.slug])
    bad = client.post(url, {"max_span": "99", "ambiguous_half_width": "0.5"}, follow=True)
    assert "Settings not changed" in bad.content.decode()
    client.post(url, {"max_span": "6", "ambiguous_half_width": "0"})
    project.refresh_from_db()
    assert (project.max_span, project.ambiguous_half_width) == (6, 0)


def test_image_flags_are_read_in_sql_without_being_fooled_by_text(rated):
    from content.models import Pair, Response
    from dashboards.selectors.judges import _with_image_flags

    project, _lead = rated
    first, second = Pair.objects.filter(project=project).order_by("id")[:2]
    Response.objects.filter(pk=first.response_a_id).update(
        content=[["text", 'no picture, just the words ["image", "x"] typed by someone']]
    )
    flags = dict(
        (pk, (a, b))
        for pk, a, b in _with_image_flags(
            Pair.objects.filter(pk__in=[first.pk, second.pk])
        ).values_list("pk", "a_image", "b_image")
    )
    assert flags == {first.pk: (False, True), second.pk: (True, True)}


def test_the_agreement_page_charts_throughput_and_agreement_per_week(client, rated):
    project, lead = rated
    ratings = Rating.objects.filter(pair__project=project, imported=False)
    earlier = ratings.order_by("pk")[:5]
    for rating in earlier:  # five ratings two weeks back
        Rating.objects.filter(pk=rating.pk).update(created_at=rating.created_at - timedelta(14))
    client.force_login(lead)
    page = client.get(reverse("dash-agreement", args=[project.slug]))
    over_time = page.context["over_time"]
    assert over_time["weeks"] == 2
    body = page.content.decode()
    assert "Ratings submitted per week" in body and "Agreement over time" in body
    # The bars count every rating: 5 in the earlier week, the rest in this one.
    assert "n=" in str(over_time["agreement_chart"])
    throughput = str(over_time["throughput_chart"])
    assert ">5</text>" in throughput and f">{ratings.count() - 5}</text>" in throughput
    assert "n=" not in throughput  # a count is its own n: no dangling "n=" after it
