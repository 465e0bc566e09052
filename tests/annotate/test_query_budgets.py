"""Query budgets: the annotate page and the submit cost the same number of queries whatever
the number of pairs, parts or images."""

import pytest
from django.urls import reverse

from annotation.models import Assignment
from content.models import Asset, Pair, Response
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

# session, user, assignment, prompt, responses, assets, progress ×3 (finished and leased,
# claimable, and gold checks left to the annotator, so that "of N" does not move when one is
# served), position, recent, the skip that Undo may take back (the last finished assignment,
# with its pair and flag), the pair's questions (annotation/selectors/pair_threads.py), the
# header's unread notifications (notifications/context_processors.py)
PAGE_QUERIES = 14
# Includes the rating, the annotator's count of the day, the claim (with the pause check, the
# look for a gold check due, and one count of the locked pair's assignments) and the rendering
# of the next pair, and (in tests) 6 savepoint statements.
SUBMIT_QUERIES = 34


def _enrich(pair, parts):
    """Give both responses of `pair` many text and image parts."""
    shas = list(Asset.objects.values_list("sha256", flat=True))
    content = []
    for i in range(parts):
        content += [["text", f"step {i}"], ["image", shas[i % len(shas)]]]
    Response.objects.filter(pk__in=[pair.response_a_id, pair.response_b_id]).update(content=content)


@pytest.mark.parametrize(("pairs", "parts"), [(4, 1), (40, 12)])
def test_annotate_page_and_submit_budgets(
    client, tmp_path, django_assert_num_queries, pairs, parts
):
    task = queued_pairs(tmp_path, count=pairs)
    for pair in Pair.objects.filter(task=task):
        _enrich(pair, parts)
    user = member("budget", task.project)
    client.force_login(user)
    location = client.post(reverse("task-next", args=["ann", "t2i"]))["Location"]
    with django_assert_num_queries(PAGE_QUERIES):
        assert client.get(location).status_code == 200
    # The day's first rating also makes the annotator's row of the day's count (2 queries).
    with django_assert_num_queries(SUBMIT_QUERIES + 2):
        response = client.post(location, {"overall": "3"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert Assignment.objects.filter(annotator=user).count() == 2
    with django_assert_num_queries(SUBMIT_QUERIES):
        response = client.post(response["HX-Push-Url"], {"overall": "5"}, HTTP_HX_REQUEST="true")
    assert response.status_code == 200
    assert Assignment.objects.filter(annotator=user).count() == 3
