"""The expert's own page: the signed-in member's pairs per day, active hours, median
time per pair and the gold checks they answered, with the expected side and the explanation
once their answer is final; nothing of anyone else, nothing of a pair still open; any project
not theirs answers like one that does not exist."""

import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils import timezone
from django.utils.dateformat import format as date_format

from annotation.models import Assignment
from annotation.selectors.pairs import rating_can_change
from dashboards.selectors import own_work
from dashboards.selectors.annotator import annotator_figures
from projects.models import Membership
from tests.expert_page.conftest import (
    FINAL_EXPLANATION,
    FRESH_EXPLANATION,
    FRESH_GOLD_SECONDS,
    PENDING,
    PENDING_EXPLANATION,
    QUALIFYING_SECONDS,
    SECONDS,
    ordinary_ratings,
)
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

# session, user, the membership and its tasks, the day tallies, the hours (2), the median, the
# gold answers (the tally, the latest listed), the header's unread notifications.
PAGE_QUERIES = 11


def _url(project) -> str:
    return reverse("own-work", args=[project.slug])


def _text(answer) -> str:
    """The page's text, tags removed and spaces collapsed (entities kept)."""
    return re.sub(r"\s+", " ", re.sub(r"<[^>]+>", " ", answer.content.decode()))


def test_pairs_per_day_hours_and_median_are_the_experts_own(client, expert_work):
    work = expert_work
    figures = own_work.own_work_figures(work.project, work.expert, now=work.now)
    day = {ago: timezone.localdate(work.now - timedelta(days=ago)) for ago in (0, 1, 2)}
    # Every rating counts on its day, gold checks too (the overview's tallies); the hours are
    # the active seconds of that day's ratings.
    today = sum(SECONDS[0]) + FRESH_GOLD_SECONDS + QUALIFYING_SECONDS
    yesterday = sum(SECONDS[1]) + 100
    assert [(row["day"], row["ratings"], row["hours"]) for row in figures["days"]] == [
        (day[0], 3, pytest.approx(today / 3600)),
        (day[1], 4, pytest.approx(yesterday / 3600)),
        (day[2], 2, pytest.approx(sum(SECONDS[2]) / 3600)),
    ]
    assert figures["ratings_total"] == 9
    assert figures["hours_total"] == pytest.approx((today + yesterday + 3600) / 3600)
    # 360, 720, 900, 1080, 1800, 1800: the gold checks apart.
    assert figures["median_seconds"] == 990

    # The lead's page of the same person says the same.
    lead_view = annotator_figures(work.project, work.expert)
    assert lead_view["overall"]["median_active_seconds"] == figures["median_seconds"]
    assert lead_view["speed"]["total_hours"] == pytest.approx(figures["hours_total"])

    client.force_login(work.expert)
    page = _text(client.get(_url(work.project)))
    assert "9 pairs rated in 1.91 active hours; median 990.0 s per pair" in page
    for ago, (n, hours) in {0: (3, "0.28"), 1: (4, "0.63"), 2: (2, "1.00")}.items():
        assert f"{date_format(day[ago], 'D j M Y')} {n} {hours}" in page

    # The colleague's page holds only the colleague's three ratings of today and their gold.
    colleague = own_work.own_work_figures(work.project, work.colleague, now=work.now)
    assert [(row["day"], row["ratings"]) for row in colleague["days"]] == [(day[0], 3), (day[1], 1)]
    assert colleague["median_seconds"] == 5 and colleague["gold_total"] == 1


def test_an_answered_gold_check_shows_the_expected_side_as_seen_and_the_explanation(
    client, expert_work
):
    work = expert_work
    client.force_login(work.expert)
    answer = client.get(_url(work.project))
    html, page = answer.content.decode(), _text(answer)
    # Newest first: the qualification answer (final at once), then yesterday's check.
    qualifying, final = answer.context["gold_answers"]
    assert (qualifying["assignment_id"], final["assignment_id"]) == (
        work.qualifying.pk,
        work.final.pk,
    )
    # A was expected; B was on the left for them (swapped) and they chose it.
    assert (final["answer"], final["expected"], final["right"]) == ("Left better", "Right", False)
    assert (qualifying["expected"], qualifying["right"]) == ("Right", True)
    assert "1 of 2 answered as expected" in page
    assert "Right better Not the expected side" in page
    # The explanation, escaped like every text on the page.
    assert "&lt;b&gt;Right&lt;/b&gt; keeps the horizon &amp; the sun" in html
    assert FINAL_EXPLANATION not in html
    assert "B follows the prompt" in page
    assert f'href="{reverse("annotate", args=[work.final.pk])}"' in html


def test_a_gold_check_not_answered_or_still_correctable_is_not_revealed(client, expert_work):
    work = expert_work
    client.force_login(work.expert)
    html = client.get(_url(work.project)).content.decode()
    for hidden in (PENDING_EXPLANATION, FRESH_EXPLANATION, "pending-secret", "fresh-secret"):
        assert hidden not in html
    for assignment in (work.fresh, work.pending):
        assert reverse("annotate", args=[assignment.pk]) not in html
    assert f"scene number {PENDING}" not in html  # the pending gold pair's prompt

    # Just answered, the check can still be corrected: it stays unlisted until it cannot.
    fresh = Assignment.objects.select_related("pair__project").get(pk=work.fresh.pk)
    grace = timedelta(minutes=work.project.edit_grace_minutes)
    assert rating_can_change(fresh, work.now)
    before = own_work.own_work_figures(work.project, work.expert, now=work.now + grace / 2)
    assert rating_can_change(fresh, work.now + grace - timedelta(seconds=1))
    assert fresh.pk not in [g["assignment_id"] for g in before["gold_answers"]]
    figures = own_work.own_work_figures(work.project, work.expert, now=work.now + grace)
    assert not rating_can_change(fresh, work.now + grace)
    listed = [g["assignment_id"] for g in figures["gold_answers"]]
    assert sorted(listed) == sorted([fresh.pk, work.qualifying.pk, work.final.pk])
    assert listed[-1] == work.final.pk  # newest first
    # The pair handed out but never answered: never, however late.
    later = own_work.own_work_figures(work.project, work.expert, now=work.now + 100 * grace)
    assert work.pending.pk not in [g["assignment_id"] for g in later["gold_answers"]]


def _not_found(answer) -> str:
    assert answer.status_code == 404
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]*"', "", answer.content.decode())


def test_only_a_member_sees_their_own_page_and_any_other_project_is_a_missing_one(
    client, expert_work, tmp_path
):
    work = expert_work
    other = queued_pairs(tmp_path, project_slug="other", count=1).project
    outsider = member("outsider", other)
    # A member of another project: this project's page is the page of no project at all.
    client.force_login(outsider)
    missing = client.get(reverse("own-work", args=["no-such-project"]))
    assert _not_found(client.get(_url(work.project))) == _not_found(missing)
    assert client.get(_url(other)).status_code == 200
    # Signed out: the login page.
    client.logout()
    answer = client.get(_url(work.project))
    assert answer.status_code == 302 and answer.url.startswith(reverse("login"))
    # The operator is no member: no page of their own here.
    operator = User.objects.create_superuser("operator", password="pw-operator-1")
    client.force_login(operator)
    assert client.get(_url(work.project)).status_code == 404
    # A lead of the project has a page of their own work too (none yet).
    lead = member("boss", work.project, role=Membership.Role.LEAD)
    client.force_login(lead)
    answer = client.get(_url(work.project))
    assert answer.status_code == 200 and answer.context["gold_answers"] == []
    assert "You have not rated a pair in this project yet." in _text(answer)
    assert "expert" not in _text(answer)  # nobody else's name, nobody else's figures
    # A former member's ratings stay, but not their access.
    Membership.objects.filter(user=work.expert, project=work.project).delete()
    client.force_login(work.expert)
    assert client.get(_url(work.project)).status_code == 404


def test_the_home_page_links_each_project_to_the_experts_own_page(client, expert_work):
    client.force_login(expert_work.expert)
    html = client.get(reverse("home")).content.decode()
    assert f'href="{_url(expert_work.project)}"' in html


def _page_queries(client, user, project) -> int:
    """The page's queries for `user`, signed in beforehand; at most PAGE_QUERIES."""
    client.force_login(user)
    with CaptureQueriesContext(connection) as queries:
        assert client.get(_url(project)).status_code == 200
    assert len(queries) <= PAGE_QUERIES, [query["sql"] for query in queries]
    return len(queries)


def test_the_query_count_does_not_grow_with_the_ratings_days_or_gold_answers(
    client, expert_work, tmp_path
):
    # The colleague: 4 ratings on 2 days, 1 gold answer listed; the expert: 9 ratings on 3
    # days, 2 gold answers listed (and 2 not); "busy": 36 ratings on 12 days, none.
    few = _page_queries(client, expert_work.colleague, expert_work.project)
    assert _page_queries(client, expert_work.expert, expert_work.project) == few
    many = queued_pairs(tmp_path, project_slug="busy", count=40)
    busy = member("busy", many.project)
    ordinary_ratings(busy, many, {ago: [30 + ago] * 3 for ago in range(12)}, timezone.now())
    assert _page_queries(client, busy, many.project) == few == PAGE_QUERIES
