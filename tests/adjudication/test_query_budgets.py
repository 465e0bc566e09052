"""The queue page, the pair page and a decision read a fixed number of queries whatever the
length of the queue (the pair page and the decision read the queue's ids in one query)."""

import pytest
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Adjudication
from dashboards.selectors.disagreements import disagreements
from projects.models import Project
from tests.adjudication.conftest import QUEUE

pytestmark = pytest.mark.django_db


def _counts(client, project, pair_id) -> list[int]:
    counts = []
    for url in (
        reverse("dash-disagreements", args=[project.slug]) + "?state=all",
        reverse("dash-pair", args=[project.slug, pair_id]) + "?from=queue",
    ):
        with CaptureQueriesContext(connection) as queries:
            assert client.get(url).status_code == 200
        counts.append(len(queries))
    decide = reverse("dash-pair-decide", args=[project.slug, pair_id]) + "?from=queue"
    with CaptureQueriesContext(connection) as queries:
        answer = client.post(decide, {"decision": "keep_a", "note": "A follows the prompt"})
    assert answer.status_code == 302
    counts.append(len(queries))
    return counts


def test_queries_do_not_grow_with_the_queue(client, contested):
    project, lead, ids = contested
    client.force_login(lead)
    # The audit entry's content type is read once per process, then cached: not the queue's.
    ContentType.objects.get_for_model(Adjudication)
    short = _counts(client, project, ids[QUEUE[0]])
    # A wider band: every pair is in the queue.
    Project.objects.filter(pk=project.pk).update(max_span=1, ambiguous_half_width=3)
    project.refresh_from_db()
    assert disagreements(project, state="all")["total"] == len(ids) > len(QUEUE)
    long = _counts(client, project, ids[QUEUE[1]])
    assert long == short, (short, long)
    assert max(short) <= 25  # today 8, 16 and 16 (the decision's audit entry included)
