"""Query budgets of the API's lists and pages: a fixed number of queries, whatever the number
of rows (docs/architecture.md §3)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from tests.api.conftest import import_predictions, rate, token_client
from tests.factories import member, queued_pairs

# (URL, who asks, budget): the token, the count, the page, plus the roles (projects), the
# lead check (judges) or the aspect scores (ratings). A token's last use is written at most
# once a minute (projects/services/api_tokens.py): a first request writes it, uncounted here.
PAGES = [
    ("/api/projects/", "lead", 4),
    ("/api/tasks/", "annotator", 3),
    ("/api/pairs/", "lead", 3),
    ("/api/assignments/", "annotator", 3),
    ("/api/ratings/", "annotator", 4),
    ("/api/runs/", "lead", 3),
    ("/api/verdicts/", "lead", 3),
    ("/api/judges/", "lead", 4),
]


def _count(client, url) -> int:
    with CaptureQueriesContext(connection) as queries:
        answer = client.get(url)
    assert answer.status_code == 200, answer.content
    return len(queries)


def _grow(world, tmp_path):
    """More of everything the lists show: pairs, tasks, ratings, verdicts, runs."""
    more = queued_pairs(tmp_path, project_slug="alpha", task_slug="edit", count=8)
    for i in range(3):
        rate(world.ann_a, world.alpha_task)
        rate(world.ann_a, more)
        rate(member(f"extra{i}", world.alpha), more)
    import_predictions(tmp_path, more, "ext-judge-2")
    import_predictions(tmp_path, more, "ext-judge-3", judgement="B")


@pytest.mark.parametrize(("url", "who", "budget"), PAGES)
def test_lists_have_a_fixed_query_budget(world, tmp_path, url, who, budget):
    rate(world.ann_a, world.alpha_task)
    client = token_client(world.lead_a if who == "lead" else world.ann_a)
    client.get("/api/")  # the token's first use (its last-use time written)
    before = _count(client, url)
    _grow(world, tmp_path)
    after = _count(client, url)
    assert before == after <= budget


def test_pages_have_a_fixed_query_budget(world, tmp_path, django_assert_max_num_queries):
    assignment = rate(world.ann_a, world.alpha_task)
    lead, annotator = token_client(world.lead_a), token_client(world.ann_a)
    pages = [
        (lead, f"/api/pairs/{assignment.pair_id}/", 9),
        (lead, f"/api/runs/{world.run_a.pk}/", 5),
        (annotator, f"/api/assignments/{assignment.pk}/", 8),
        # report --json: 10, 5 for the annotators' quality figures (ratings, gold answers,
        # pauses, qualifications, the decided pairs the competence-weighted vote is compared
        # with; their names come with the report's other reads), 2 for the judges' bias cards
        # (pair traits, judge models), 2 for the prediction-powered figures (the verdicts on
        # the experts' queue, the pool's draws and decisions).
        (lead, "/api/projects/alpha/report/", 19),
    ]
    for client, url, budget in pages:
        with django_assert_max_num_queries(budget):
            assert client.get(url).status_code == 200
