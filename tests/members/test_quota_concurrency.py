"""A quota holds when one annotator claims from several tabs at once, on PostgreSQL with real
transactions: their membership row is locked before any pair, so two claims never both take
the last pair of the quota. Skipped without PostgreSQL; CI runs it."""

import threading

import pytest
from django.db import connection

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from projects.models import Membership
from tests.factories import member, queued_pairs

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]

QUOTA = 3


def test_claims_from_many_tabs_at_once_stop_at_the_quota(tmp_path):
    task = queued_pairs(tmp_path, count=12)
    user = member("tabs", task.project)
    Membership.objects.filter(user=user).update(project_quota=QUOTA)
    start = threading.Barrier(6)
    errors: list[Exception] = []

    def tab():
        try:
            start.wait()
            for _ in range(6):
                assignment = assignment_claim(user, task)
                if assignment is None:
                    continue
                # Two tabs may hold the same lease: the second submit repeats the first.
                rating_submit(assignment.pk, user, RatingInput(overall=5))
        except Exception as exc:  # collected and asserted below
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=tab) for _ in range(6)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a tab hung"
    assert errors == []
    taken = Assignment.objects.filter(annotator=user).exclude(status="skipped")
    assert taken.filter(status="submitted").count() == QUOTA
    assert taken.count() == QUOTA
