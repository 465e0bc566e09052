"""Adjudication as a queue: the queue shows the undecided pairs by default, a decision opens
the next undecided pair of the same filter (the default one for a pair found elsewhere), the
last one lands back on the queue; the filter in the query string is parsed strictly, and the
pages and the decision stay the project's leads' own."""

import pytest
from django.urls import reverse

from annotation.models import Adjudication, AnnotatorRequest
from content.models import Pair
from dashboards.selectors.disagreements import disagreements
from tests.adjudication.conftest import AMBIGUOUS, BY_SPAN, QUEUE
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def _ids(project, **filters) -> list[int]:
    return [pair.pk for pair in disagreements(project, **filters)["pairs"]]


def _pair_url(project, pair_id, query="") -> str:
    return reverse("dash-pair", args=[project.slug, pair_id]) + query


def _decide(client, project, pair_id, query="", decision="keep_a", note="A follows the prompt"):
    url = reverse("dash-pair-decide", args=[project.slug, pair_id]) + query
    return client.post(url, {"action": "adjudicate", "decision": decision, "note": note})


def test_the_queue_is_the_one_the_fixture_means(contested):
    project, _lead, ids = contested
    assert _ids(project) == [ids[n] for n in QUEUE]
    assert _ids(project, reason="span") == [ids[n] for n in BY_SPAN]
    assert _ids(project, reason="ambiguous") == [ids[n] for n in AMBIGUOUS]


def test_the_queue_shows_undecided_pairs_unless_asked_for_others(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in QUEUE]
    _decide(client, project, queue[1])
    url = reverse("dash-disagreements", args=[project.slug])
    listed = client.get(url)
    assert [p.pk for p in listed.context["pairs"]] == [queue[0], *queue[2:]]
    assert '<option value="undecided" selected>Undecided</option>' in listed.content.decode()
    decided = client.get(url, {"state": "decided"}).context["pairs"]
    assert [p.pk for p in decided] == [queue[1]]
    assert decided[0].decided_by == Pair.DecidedBy.ADJUDICATION
    everything = client.get(url, {"state": "all"}).context["pairs"]
    assert [p.pk for p in everything] == queue  # a decided pair keeps its place


def test_the_queue_links_each_pair_with_its_filter(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    url = reverse("dash-disagreements", args=[project.slug])
    page = client.get(url, {"reason": "span", "state": "all"}).content.decode()
    first = _pair_url(project, ids[BY_SPAN[0]])
    assert f'href="{first}?from=queue&amp;reason=span&amp;state=all"' in page


def test_a_decision_opens_the_next_undecided_pair_of_the_same_filter(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in AMBIGUOUS]  # 1, 0, 3, 4, 6: after 0 comes 3 (unfiltered: 2)
    query = "?from=queue&reason=ambiguous"
    answer = _decide(client, project, queue[0], query)
    assert answer.status_code == 302
    assert answer.url == _pair_url(project, queue[1], query)
    assert _ids(project, reason="ambiguous") == queue[1:]
    assert _decide(client, project, queue[1], query).url == _pair_url(project, queue[2], query)
    # From the middle (pair 3 passed over), the next one; after the last one, pair 3.
    assert _decide(client, project, queue[3], query).url == _pair_url(project, queue[4], query)
    answer = _decide(client, project, queue[4], query)
    assert answer.url == _pair_url(project, queue[2], query)
    page = client.get(answer.url).content.decode()
    assert f"Decision recorded for {Pair.objects.get(pk=queue[4]).external_id}." in page


def test_the_last_decision_lands_on_the_queue_saying_none_is_left(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in BY_SPAN]
    query = "?from=queue&task=t2i&reason=span"
    for pair_id, following in zip(queue, queue[1:], strict=False):
        answer = _decide(client, project, pair_id, query, decision="drop")
        assert answer.url == _pair_url(project, following, query)
    answer = _decide(client, project, queue[-1], query, decision="drop")
    queue_url = reverse("dash-disagreements", args=[project.slug])
    assert answer.url == f"{queue_url}?task=t2i&reason=span"
    page = client.get(answer.url)
    assert "Done: no undecided pair is left in this queue." in page.content.decode()
    assert list(page.context["pairs"]) == []
    assert Adjudication.objects.filter(decision="drop").count() == len(queue)
    # The rest of the queue is still there to decide.
    assert _ids(project) == [ids[n] for n in QUEUE if n not in BY_SPAN]


def test_in_the_decided_pairs_a_decision_walks_on_through_them(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    for n in (0, 3):
        _decide(client, project, ids[n])
    query = "?from=queue&state=decided"
    answer = _decide(client, project, ids[0], query, decision="keep_b", note="on second look")
    assert answer.url == _pair_url(project, ids[3], query)
    answer = _decide(client, project, ids[3], query, decision="drop", note="on second look")
    assert answer.url == _pair_url(project, ids[0], query)  # the queue wraps


def test_asking_one_more_annotator_moves_on_and_the_pair_waits_for_the_rating(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in QUEUE]
    url = reverse("dash-pair-decide", args=[project.slug, queue[0]]) + "?from=queue"
    answer = client.post(url, {"action": "annotator", "note": "three opinions, three answers"})
    assert answer.url == _pair_url(project, queue[1], "?from=queue")
    assert AnnotatorRequest.objects.filter(pair_id=queue[0]).exists()
    assert _ids(project) == queue[1:]
    assert _ids(project, state="waiting") == [queue[0]]


def test_opened_outside_the_queue_a_decision_goes_on_to_the_queue(client, contested):
    """A pair found elsewhere (the pair browser, a flag): once decided, the next undecided pair
    of the queue opens, with the queue's filter from then on."""
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in QUEUE]
    assert _decide(client, project, queue[0]).url == _pair_url(project, queue[1], "?from=queue")
    # A filter given without the queue's origin is the queue's filter.
    by_span = [ids[n] for n in BY_SPAN]
    answer = _decide(client, project, by_span[1], "?reason=span", decision="drop")
    assert answer.url == _pair_url(project, by_span[2], "?from=queue&reason=span")


def test_a_refused_decision_stays_on_the_pair_with_its_filter(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    pair_id = ids[QUEUE[0]]
    answer = _decide(client, project, pair_id, "?from=queue&state=all", note="  ")
    assert answer.url == _pair_url(project, pair_id, "?from=queue&state=all")
    assert "Write a note saying why." in client.get(answer.url).content.decode()
    assert not Adjudication.objects.exists()


def test_the_pair_page_walks_and_decides_within_its_filter(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    queue = [ids[n] for n in AMBIGUOUS]
    url = _pair_url(project, queue[1], "?from=queue&reason=ambiguous")
    page = client.get(url).content.decode()
    assert f'href="{_pair_url(project, queue[0])}?from=queue&amp;reason=ambiguous"' in page
    assert f'href="{_pair_url(project, queue[2])}?from=queue&amp;reason=ambiguous"' in page
    decide = reverse("dash-pair-decide", args=[project.slug, queue[1]])
    assert f'action="{decide}?from=queue&amp;reason=ambiguous"' in page
    assert f"2 of {len(queue)} in the" in page
    assert 'id="keys"' in page and "adjudicate.js" in page
    # The annotators' image viewer, not a copy: its dialog and its script.
    assert 'id="zoom"' in page and "viewer.js" in page and 'class="zoomable"' in page


@pytest.mark.parametrize(
    "query",
    [
        "?state=shiny",
        "?reason=nope",
        "?task=no-such-task",
        "?from=elsewhere",
        "?state=all&state=decided",
    ],
)
def test_a_filter_that_names_nothing_is_refused_and_changes_nothing(client, contested, query):
    project, lead, ids = contested
    client.force_login(lead)
    pair_id = ids[QUEUE[0]]
    assert client.get(_pair_url(project, pair_id, query)).status_code == 400
    queue_url = reverse("dash-disagreements", args=[project.slug]) + query
    assert client.get(queue_url).status_code == 400
    assert _decide(client, project, pair_id, query).status_code == 400
    assert not Adjudication.objects.exists()


def test_another_projects_lead_gets_404_on_the_pair_and_its_decision(client, contested, tmp_path):
    project, _lead, ids = contested
    other = queued_pairs(tmp_path, project_slug="other", count=1).project
    client.force_login(member("stranger", other, role="lead"))
    pair_id = ids[QUEUE[0]]
    for slug in (project.slug, other.slug):  # their own project does not hold it either
        assert client.get(reverse("dash-pair", args=[slug, pair_id])).status_code == 404
        decide = reverse("dash-pair-decide", args=[slug, pair_id]) + "?from=queue"
        answer = client.post(decide, {"decision": "keep_a", "note": "mine now"})
        assert answer.status_code == 404
        answer = client.post(decide, {"action": "annotator", "note": "mine now"})
        assert answer.status_code == 404
    assert not Adjudication.objects.exists() and not AnnotatorRequest.objects.exists()


def test_an_annotator_of_the_project_cannot_open_or_decide(client, contested):
    project, _lead, ids = contested
    client.force_login(project.memberships.get(user__username="expert0").user)
    pair_id = ids[QUEUE[0]]
    assert client.get(_pair_url(project, pair_id)).status_code == 403
    assert _decide(client, project, pair_id, "?from=queue").status_code == 403
    assert not Adjudication.objects.exists()
