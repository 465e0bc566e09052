"""An annotator's page shows a lead one person's work: their agreement with the other experts
(leave one out, with its interval), speed, gold checks, flags and access, and their ratings
linked to the pairs. Only the project's leads see it, for people of the project only."""

import math
import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import AnnotatorPause, Assignment, Flag, Rating
from annotation.services.assignments import assignment_claim
from dashboards.selectors import annotator as selector
from dashboards.selectors.agreement import agreement as agreement_figures
from projects.models import Membership, PlaceholderAccount, Task
from tests.annotator_page.conftest import rate
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def _url(project, user) -> str:
    return reverse("dash-annotator", args=[project.slug, user.pk])


def _text(answer) -> str:
    """The page's text, tags removed and spaces collapsed."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode()))


def _wilson(k: int, n: int, z: float = 1.959964) -> tuple[float, float]:
    p = k / n
    middle = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / (1 + z * z / n)
    return middle - half, middle + half


def test_agreement_with_the_others_is_each_rating_against_the_others_mean(client, experts):
    project, lead, users = experts
    xavier = users["xavier"]
    # Canonical scores (centre 4), xavier against the mean of yvonne's and zoe's:
    #   pair 0: 6 vs (5+7)/2 = 6: A and A, agree
    #   pair 1: 2 vs (6+6)/2 = 6: B against A, disagree
    #   pair 2: 4 vs (1+2)/2 = 1.5: a tie against B, compared and not agreeing
    #   pair 3: 5 vs (3+5)/2 = 4: the others sit at the centre, not compared
    figures = selector.annotator_figures(project, xavier)
    (task,) = figures["tasks"]
    agreement = task["agreement"]
    assert (agreement["ratings"], agreement["compared"], agreement["matched"]) == (4, 3, 1)
    assert agreement["agreement"] == pytest.approx(1 / 3)
    # Wilson at 1 of 3: (1/3 + z²/6) / (1 + z²/3) ± z √(2/27 + z²/36) / (1 + z²/3)
    low, high = agreement["interval"]
    assert (round(low, 4), round(high, 4)) == (0.0615, 0.7923)
    assert (low, high) == pytest.approx(_wilson(1, 3))
    assert figures["overall"]["compared"] == 3
    # The agreement page's "Agreement with the others" for xavier is the same figure.
    (row,) = [row for row in agreement_figures(project).annotators if row["name"] == "xavier"]
    assert (row["loo_agreement"], row["compared"]) == (agreement["agreement"], 3)
    # Left-side bias over the three decisive ratings (pairs 0, 1, 3), from the sides shown.
    shown = Rating.objects.filter(annotator=xavier, pair__status__in=["kept", "dropped"])
    decisive = [(r.overall > 4, r.assignment.swapped) for r in shown if r.overall != 4]
    left = sum(prefers_a != swapped for prefers_a, swapped in decisive)
    assert (agreement["decisive"], agreement["left_bias"]) == (3, pytest.approx(left / 3))

    client.force_login(lead)
    page = _text(client.get(_url(project, xavier)))
    assert "0.333 [0.061, 0.792]" in page and "1 of 3 pairs" in page


def test_each_rating_says_which_side_the_others_took(client, experts):
    project, lead, users = experts
    rows = selector.annotator_figures(project, users["xavier"])["ratings"]
    by_pair = {row["rating"].pair.external_id.split("-")[1]: row for row in rows}
    assert [(by_pair[i]["side"], by_pair[i]["others"]) for i in "0123"] == [
        ("A", "A"),
        ("B", "A"),
        ("tie", "B"),
        ("A", None),  # the others' mean is at the centre
    ]
    assert by_pair["4"]["gold"] and by_pair["4"]["others"] is None  # the gold check, apart


def test_speed_is_active_time_per_rating_as_on_the_hours_page(client, experts):
    project, lead, users = experts
    # 10 + 20 + 30 + 40 s on the four pairs and 50 s on the gold check: 150 s for 5 ratings;
    # the median leaves the gold check out, as the agreement page does: (20 + 30) / 2.
    figures = selector.annotator_figures(project, users["xavier"])
    assert figures["speed"]["ratings"] == 5
    assert figures["speed"]["total_hours"] == pytest.approx(150 / 3600)
    assert figures["speed"]["seconds_per_rating"] == pytest.approx(30)
    assert figures["overall"]["median_active_seconds"] == 25
    client.force_login(lead)
    page = _text(client.get(_url(project, users["xavier"])))
    assert "30.0 s per rating" in page and "median 25.0 s" in page
    hours = _text(client.get(reverse("dash-hours", args=[project.slug])))
    assert "xavier 5 0.04" in hours  # the same 150 s, on the hours page


def test_gold_history_and_the_flags_they_raised(client, experts):
    project, lead, users = experts
    figures = selector.annotator_figures(project, users["xavier"])
    gold = figures["tasks"][0]["gold"]
    # One gold check, answered B where A was expected; six pairs handed out (four rated, one
    # flagged, the gold check last).
    assert (gold["correct"], gold["n"], gold["accuracy"]) == (0, 1, 0)
    assert gold["interval"] == pytest.approx([0, _wilson(0, 1)[1]])
    assert (gold["handed"], gold["checks"], gold["since_last"]) == (6, 1, 0)
    (answer,) = figures["gold_answers"]
    assert (answer["expected"], answer["given"], answer["right"]) == ("A", "B", False)
    (flag,) = figures["flags_raised"]
    assert (flag.reason, flag.note, figures["flags_total"]) == ("broken", "black image", 1)

    client.force_login(lead)
    page = client.get(_url(project, users["xavier"])).content.decode()
    for pair_id in (answer["pair_id"], flag.pair_id):
        assert reverse("dash-pair", args=[project.slug, pair_id]) in page
    assert "0 of 1" in _text(client.get(_url(project, users["xavier"])))
    # Yvonne flagged nothing and answered no gold check.
    yvonne = selector.annotator_figures(project, users["yvonne"])
    assert yvonne["flags_total"] == 0 and yvonne["gold_answers"] == []


def test_ratings_link_to_their_pairs_a_page_at_a_time(client, experts, monkeypatch):
    project, lead, users = experts
    monkeypatch.setattr(selector, "RATINGS_PER_PAGE", 2)
    client.force_login(lead)
    url = _url(project, users["xavier"])
    seen = []
    for number in (1, 2, 3):
        answer = client.get(url, {"page": number})
        assert answer.context["pages"] == 3
        listed = [row["rating"] for row in answer.context["ratings"]]
        seen += [rating.pk for rating in listed]
        for rating in listed:
            link = reverse("dash-pair", args=[project.slug, rating.pair_id])
            assert f'href="{link}"' in answer.content.decode()
    newest_first = Rating.objects.filter(annotator=users["xavier"]).order_by("-created_at", "-id")
    assert seen == [rating.pk for rating in newest_first]
    assert client.get(url, {"page": "99"}).context["page"] == 3  # past the end: the last
    assert client.get(url, {"page": "²"}).context["page"] == 1


def test_a_paused_annotator_is_re_admitted_from_their_page(client, experts):
    project, lead, users = experts
    xavier, task = users["xavier"], Task.objects.get(project=project)
    AnnotatorPause.objects.create(task=task, annotator=xavier, reason="0 of 1 gold checks right")
    client.force_login(lead)
    url = _url(project, xavier)
    page = client.get(url).content.decode()
    assert "paused" in page and "0 of 1 gold checks right" in page
    readmit = reverse("dash-readmit", args=[project.slug, task.slug, xavier.pk])
    assert f'action="{readmit}"' in page
    answer = client.post(readmit, {"back": "annotator"})
    assert answer.status_code == 302 and answer.url == f"{url}#quality"
    assert not AnnotatorPause.objects.filter(annotator=xavier, readmitted_at__isnull=True).exists()
    page = _text(client.get(url))
    assert "Re-admitted" in page and "re-admitted" in page  # the message, then the history
    assert "Re-admit to" not in page


def test_only_the_projects_leads_see_it_and_only_for_its_people(client, experts, tmp_path):
    project, lead, users = experts
    xavier = users["xavier"]
    other = queued_pairs(tmp_path, project_slug="other", count=1).project
    other_lead = member("other-lead", other, role=Membership.Role.LEAD)
    outsider = member("outsider", other)  # belongs only to the other project
    # A lead of another project, for a person of this one, on either project's address.
    client.force_login(other_lead)
    assert client.get(_url(project, xavier)).status_code == 404
    assert client.get(_url(other, xavier)).status_code == 404
    # This project's lead, for someone of another project only, or nobody at all.
    client.force_login(lead)
    assert client.get(_url(project, outsider)).status_code == 404
    assert client.get(reverse("dash-annotator", args=[project.slug, 10**9])).status_code == 404
    # The project's annotators, about themselves or a colleague: 404 as well.
    client.force_login(users["yvonne"])
    assert client.get(_url(project, xavier)).status_code == 404
    assert client.get(_url(project, users["yvonne"])).status_code == 404
    client.logout()
    assert client.get(_url(project, xavier)).status_code == 302  # to the login page
    # A former member who rated here is still one of the project's people; a placeholder
    # account of imported ratings never is.
    client.force_login(lead)
    Membership.objects.filter(user=xavier, project=project).delete()
    answer = client.get(_url(project, xavier))
    assert answer.status_code == 200 and "Former member" in _text(answer)
    PlaceholderAccount.objects.create(user=users["zoe"], project=project)
    Membership.objects.filter(user=users["zoe"]).delete()
    assert client.get(_url(project, users["zoe"])).status_code == 404
    # The operator sees every project's people.
    from django.contrib.auth.models import User

    operator = User.objects.create_superuser("operator", password="pw-operator-1")
    client.force_login(operator)
    assert client.get(_url(project, users["yvonne"])).status_code == 200


def test_every_annotator_name_on_the_dashboards_links_to_their_page(client, experts):
    project, lead, users = experts
    client.force_login(lead)
    for name in ("dash-agreement", "dash-hours", "project-members"):
        page = client.get(reverse(name, args=[project.slug])).content.decode()
        for user in users.values():
            link = f'<a href="{_url(project, user)}">{user.username}</a>'
            assert link in page, (name, user.username)
    agreement = client.get(reverse("dash-agreement", args=[project.slug])).content.decode()
    # In the quality table of the task and in the annotators' table.
    assert agreement.count(f'href="{_url(project, users["xavier"])}"') == 2
    # The overview's throughput and recent flags, and the pair page's ratings and flags.
    xavier = f'<a href="{_url(project, users["xavier"])}">xavier</a>'
    overview = client.get(reverse("dash-overview", args=[project.slug])).content.decode()
    assert overview.count(xavier) == 2
    flagged = Flag.objects.get(reported_by=users["xavier"]).pair_id
    rated = Rating.objects.filter(annotator=users["xavier"]).order_by("pk").first().pair_id
    for pair_id, links in ((flagged, 1), (rated, 1)):
        pair = client.get(reverse("dash-pair", args=[project.slug, pair_id])).content.decode()
        assert pair.count(xavier) == links


def test_the_query_count_does_not_grow_with_the_ratings(
    client, experts, django_assert_num_queries, tmp_path
):
    project, lead, users = experts
    client.force_login(lead)
    url = _url(project, users["xavier"])
    with CaptureQueriesContext(connection) as queries:
        assert client.get(url).status_code == 200
    small = len(queries)
    # Twelve more pairs in a second task, rated by xavier and two newcomers, with a flag,
    # a pause and a second gold answer: more of every row the page lists.
    task = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=12)
    for name in ("xavier", "walt", "vera"):
        user = users.get(name) or member(name, project)
        while (assignment := assignment_claim(user, task)) is not None:
            rate(user, assignment, 2 + assignment.pair_id % 5)
    AnnotatorPause.objects.create(task=task, annotator=users["xavier"], reason="test")
    assert Rating.objects.filter(annotator=users["xavier"]).count() == 17
    assert Assignment.objects.filter(annotator=users["xavier"]).count() > 6
    with django_assert_num_queries(small):
        assert client.get(url).status_code == 200
    with django_assert_num_queries(small):
        assert client.get(url, {"page": "2"}).status_code == 200
    with django_assert_num_queries(15):  # the budget the selector's docstring states
        selector.annotator_figures(project, users["xavier"], page=2)
