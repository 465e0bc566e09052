"""An annotator's list of every pair they rated in a project, page by page: their own
ratings only, newest first, blind (no generator, no external id, no one else's rating), the
score as they pressed it; any project or task not theirs answers like one that does not
exist; a fixed number of queries whatever the number of ratings."""

import re

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from django.utils.html import escape

from annotation.models import Assignment
from annotation.selectors import own_ratings as own_ratings_module
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.rendering import content_summary
from projects.models import Project
from projects.scale import to_form
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def small_pages(monkeypatch):
    monkeypatch.setattr(own_ratings_module, "OWN_RATINGS_PER_PAGE", 3)


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, project_slug="mine", count=8)


def rate(user, task, pressed: int = 6) -> Assignment:
    assignment = assignment_claim(user, task)
    rating_submit(assignment.pk, user, RatingInput(overall=pressed))
    return assignment


def url(project, **query) -> str:
    params = "&".join(f"{key}={value}" for key, value in query.items())
    return reverse("own-ratings", args=[project.slug]) + (f"?{params}" if params else "")


def prompts_on(page: str) -> list[str]:
    return re.findall(r'<td class="own-ratings-prompt">(.*?)</td>', page)


def test_every_rating_is_listed_newest_first_page_by_page(client, task, small_pages):
    ann = member("ann", task.project)
    rated = [rate(ann, task) for _ in range(7)]
    client.force_login(ann)

    pages = [client.get(url(task.project, page=n)) for n in (1, 2, 3)]

    assert [page.status_code for page in pages] == [200, 200, 200]
    shown = [prompts_on(page.content.decode()) for page in pages]
    assert [len(prompts) for prompts in shown] == [3, 3, 1]
    newest_first = [escape(content_summary(a.pair.prompt.content, limit=120)) for a in rated][::-1]
    assert [p for prompts in shown for p in prompts] == newest_first
    assert "1–3 of 7 ratings" in pages[0].content.decode()
    assert 'rel="next"' in pages[0].content.decode()
    assert 'rel="next"' not in pages[2].content.decode()


def test_a_page_number_out_of_range_or_not_a_number_shows_a_page(client, task, small_pages):
    ann = member("ann", task.project)
    for _ in range(4):
        rate(ann, task)
    client.force_login(ann)
    for page, expected in (("99", 1), ("abc", 3), ("-1", 1), ("", 3)):
        answer = client.get(url(task.project, page=page))
        assert answer.status_code == 200
        assert len(prompts_on(answer.content.decode())) == expected, page


def test_only_their_own_ratings_and_nothing_that_unblinds(client, task):
    ann, bea = member("ann", task.project), member("bea-the-colleague", task.project)
    mine = rate(ann, task, pressed=2)
    theirs = rate(bea, task, pressed=7)
    client.force_login(ann)

    page = client.get(url(task.project)).content.decode()

    assert len(prompts_on(page)) == 1
    assert "secretmodel" not in page  # generators, and the external ids naming them
    assert mine.pair.external_id not in page and theirs.pair.external_id not in page
    assert "bea-the-colleague" not in page
    assert "<strong>2</strong>" in page  # the digit they pressed, on their Left/Right
    assert "kept" not in page and "dropped" not in page  # no status or label of the pair
    mine.refresh_from_db()
    assert to_form(mine.rating.overall, 7, mine.swapped) == 2


def test_a_project_or_task_not_theirs_is_a_404_like_a_missing_one(client, task, tmp_path):
    ann = member("ann", task.project)
    rate(ann, task)
    other = queued_pairs(tmp_path, project_slug="theirs", count=2)
    outsider = member("out", other.project)
    rate(outsider, other)
    client.force_login(ann)
    assert client.get(url(other.project)).status_code == 404
    assert client.get(reverse("own-ratings", args=["nope"])).status_code == 404
    assert client.get(url(task.project, task="edit")).status_code == 404
    assert client.get(url(task.project, task="t2i")).status_code == 200


def test_a_task_filter_lists_that_task_only(client, task, tmp_path):
    edit = queued_pairs(tmp_path, project_slug="mine", task_slug="edit", count=2)
    ann = member("ann", task.project)
    rate(ann, task)
    rate(ann, edit)
    rate(ann, edit)
    client.force_login(ann)
    assert len(prompts_on(client.get(url(task.project)).content.decode())) == 3
    assert len(prompts_on(client.get(url(task.project, task="edit")).content.decode())) == 2


def test_a_fixed_number_of_queries_whatever_the_number_of_ratings(client, task):
    ann = member("ann", task.project)
    client.force_login(ann)
    rate(ann, task)
    client.get(url(task.project))  # sessions and caches warm
    with CaptureQueriesContext(connection) as one:
        assert client.get(url(task.project)).status_code == 200
    for _ in range(6):
        rate(ann, task)
    with CaptureQueriesContext(connection) as seven:
        assert client.get(url(task.project)).status_code == 200
    assert len(seven.captured_queries) == len(one.captured_queries)


def test_their_work_page_links_to_the_list(client, task):
    ann = member("ann", task.project)
    client.force_login(ann)
    page = client.get(reverse("own-work", args=[task.project.slug])).content.decode()
    assert reverse("own-ratings", args=[task.project.slug]) in page
    assert Project.objects.filter(slug="mine").exists()
