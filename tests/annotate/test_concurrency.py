"""Many annotators claiming and submitting at once, on PostgreSQL with real transactions
(`SELECT … FOR UPDATE SKIP LOCKED`). Skipped without PostgreSQL; CI runs it."""

import random
import threading
from functools import partial

import pytest
from django.db import connection
from django.db.models import Count

from annotation.models import Assignment, Rating
from annotation.services.assignments import assignment_claim, assignment_skip
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from tests.factories import member, queued_pairs

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _in_threads(workers, target):
    errors = []
    start = threading.Barrier(len(workers))

    def run(worker):
        try:
            start.wait()
            target(worker)
        except Exception as exc:  # collected and asserted by the caller
            errors.append(exc)
        finally:
            connection.close()

    threads = [threading.Thread(target=run, args=(worker,)) for worker in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    assert not any(thread.is_alive() for thread in threads), "a worker hung"
    return errors


def test_many_annotators_at_once_fill_every_pair_exactly_n_times(tmp_path):
    task = queued_pairs(tmp_path, count=24)
    users = [member(f"racer{i}", task.project) for i in range(10)]
    submitted: list[int] = []  # assignment ids the workers saw accepted
    claims: list[int] = []
    lock = threading.Lock()

    def annotate(user, round_number: int):
        rng = random.Random(user.pk * 1000 + round_number)
        while (assignment := assignment_claim(user, task)) is not None:
            with lock:
                claims.append(assignment.pk)
            if rng.random() < 0.1:
                assignment_skip(assignment.pk, user, "not for me")
                continue
            data = RatingInput(overall=rng.randint(1, 7))
            rating_submit(assignment.pk, user, data)
            rating_submit(assignment.pk, user, data)  # a double click
            with lock:
                submitted.append(assignment.pk)

    # A skip hands its pair back, possibly after every other annotator found the queue empty and
    # stopped (as a person would come back later), and under this zero-think-time contention a
    # claim may give up after seconds of finding the last pairs locked by others' claims
    # (`_BUSY_RETRIES`): go round again, all at once, until a round claims nothing. A pair
    # left short after that is a lost slot.
    for round_number in range(20):
        claimed_before = len(claims)
        assert _in_threads(users, partial(annotate, round_number=round_number)) == []
        if len(claims) == claimed_before:
            break

    per_pair = Assignment.objects.filter(status="submitted").values("pair").annotate(n=Count("id"))
    assert {row["n"] for row in per_pair} == {3}
    assert Rating.objects.count() == len(submitted) == len(set(submitted)) == 24 * 3
    assert set(Rating.objects.values_list("assignment", flat=True)) == set(submitted)
    leased = Assignment.objects.filter(status="leased").count()
    assert leased == 0
    duplicates = Assignment.objects.values("pair", "annotator").annotate(n=Count("id"))
    assert max(row["n"] for row in duplicates) == 1
    for pair in Pair.objects.filter(task=task):
        assert pair.rating_count == 3
        assert pair.status in (Pair.Status.KEPT, Pair.Status.DROPPED)


def test_simultaneous_double_submits_store_one_rating(tmp_path):
    task = queued_pairs(tmp_path, count=1)
    user = member("clicker", task.project)
    assignment = assignment_claim(user, task)

    def submit(_):
        rating_submit(assignment.pk, user, RatingInput(overall=2, active_seconds=1))

    assert _in_threads(range(8), submit) == []
    assert Rating.objects.filter(assignment=assignment).count() == 1
    pair = Pair.objects.get(pk=assignment.pair_id)
    assert (pair.rating_count, pair.status) == (1, Pair.Status.IN_PROGRESS)


def test_claims_racing_for_the_last_slots_never_exceed_n(tmp_path):
    task = queued_pairs(tmp_path, count=2)
    users = [member(f"rush{i}", task.project) for i in range(12)]
    claimed = []
    lock = threading.Lock()

    def claim(user):
        assignment = assignment_claim(user, task)
        with lock:
            claimed.append(assignment)

    assert _in_threads(users, claim) == []
    got = [assignment for assignment in claimed if assignment is not None]
    assert len(got) == 6  # 2 pairs × N = 3
    live = Assignment.objects.values("pair").annotate(n=Count("id"))
    assert sorted(row["n"] for row in live) == [3, 3]
