"""The overview names the open pairs the current members can never finish."""

import pytest

from annotation.services.assignments import assignment_claim, assignment_skip
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from dashboards.selectors.pool import stuck_pairs
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path, project_slug="pool", count=2, annotators_per_pair=3)


def test_three_members_can_finish_n_3_until_one_skips(task):
    project = task.project
    people = [member(f"a{i}", project) for i in range(3)]
    assert stuck_pairs(project)["count"] == 0
    first = assignment_claim(people[0], task)
    assignment_skip(first.pk, people[0], "cannot judge")
    found = stuck_pairs(project)
    assert found["count"] == 1 and found["pairs"][0] == (first.pair, 1)
    assert found["by_task"] == [(task, 1)]


def test_ratings_and_live_leases_count_and_task_limits_shrink_the_pool(task):
    project = task.project
    other = project.tasks.create(slug="other", name="Other")
    a, b = member("a", project), member("b", project)
    limited = member("c", project)
    limited.memberships.get().tasks.add(other)  # c may only take the other task
    assert stuck_pairs(project)["count"] == 2  # only a and b may take them: one short each
    assert all(short == 1 for _pair, short in stuck_pairs(project)["pairs"])
    limited.memberships.get().tasks.add(task)
    assert stuck_pairs(project)["count"] == 0
    assignment = assignment_claim(a, task)
    rating_submit(assignment.pk, a, RatingInput(overall=6))
    assignment_claim(b, task)  # a live lease still counts
    assert stuck_pairs(project)["count"] == 0


def test_extra_annotators_raise_the_need(task):
    project = task.project
    for i in range(3):
        member(f"a{i}", project)
    pair = Pair.objects.filter(task=task).first()
    Pair.objects.filter(pk=pair.pk).update(extra_annotators=1)
    assert [p.pk for p, _short in stuck_pairs(project)["pairs"]] == [pair.pk]


def test_the_overview_names_them_with_the_way_out(client, task):
    from django.urls import reverse

    project = task.project
    lead = member("boss", project, role="lead")
    people = [member(f"a{i}", project) for i in range(2)]
    client.force_login(lead)
    url = reverse("dash-overview", args=[project.slug])
    page = client.get(url).content.decode()
    assert "can never finish" not in page  # boss and two annotators: three people, N = 3
    first = assignment_claim(people[0], task)
    assignment_skip(first.pk, people[0], "unsure")
    page = client.get(url).content.decode()
    assert "1 open pair can never finish" in page
    assert reverse("project-members", args=[project.slug]) in page
    assert reverse("dash-pair", args=[project.slug, first.pair_id]) in page
