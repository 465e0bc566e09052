"""Events published together are one burst (projects/events.py): sent once their transactions
commit, without those of a transaction rolled back; a receiver's per-burst work runs once after
the burst. The embedded mode's background (core/outbox.py) runs any number of jobs on a
bounded pool of threads."""

import threading

import pytest
from django.db import transaction

from core import outbox
from projects.events import burst_gather, project_event, publish, published_together
from projects.models import Project
from tests.waiting import wait_until

pytestmark = pytest.mark.django_db


@pytest.fixture
def bursts():
    """Each burst heard, as the list of its events' data."""
    heard: list[list[dict]] = []

    def listen(sender, *, kind, data, **_):
        burst_gather("tests.bursts", data, heard.append)

    project_event.connect(listen, dispatch_uid="tests.events.bursts")
    yield heard
    project_event.disconnect(dispatch_uid="tests.events.bursts")


@pytest.fixture
def project():
    return Project.objects.create(slug="bursts", name="Bursts")


def test_events_published_together_are_one_burst_without_those_rolled_back(
    project, bursts, django_capture_on_commit_callbacks
):
    with django_capture_on_commit_callbacks(execute=True):
        with published_together():
            with transaction.atomic():
                publish(project, "pair.decided", {"pair": 1})
            with pytest.raises(RuntimeError), transaction.atomic():
                publish(project, "pair.decided", {"pair": 2})
                raise RuntimeError("this pair's transaction rolls back")
            with published_together():  # an inner block adds to the outer burst
                publish(project, "task.complete", {"task": 3})
        publish(project, "pair.decided", {"pair": 4})  # alone: a burst of one
    assert bursts == [[{"pair": 1}, {"task": 3}], [{"pair": 4}]]


def test_nothing_is_sent_for_a_transaction_rolled_back_around_the_block(
    project, bursts, django_capture_on_commit_callbacks
):
    with (
        django_capture_on_commit_callbacks(execute=True),
        pytest.raises(RuntimeError),
        transaction.atomic(),
    ):
        with published_together():
            publish(project, "pair.decided", {"pair": 1})
        raise RuntimeError("the whole transaction rolls back")
    assert bursts == []


def test_the_background_pool_runs_every_job_on_at_most_its_threads():
    pool = outbox._WorkerPool(3, idle_seconds=0.2)
    release = threading.Event()
    done: list[int] = []
    peak = 0

    def job(n: int) -> None:
        release.wait(10)
        if n == 0:
            raise ValueError("a failing job leaves its thread working")
        done.append(n)

    for n in range(50):
        pool.submit(job, n)
        peak = max(peak, pool.threads())
    release.set()
    wait_until(lambda: len(done) == 49, 20, "every job but the failing one")
    assert sorted(done) == list(range(1, 50)) and peak == 3
    wait_until(lambda: pool.threads() == 0, 20, "idle threads to end")
    pool.submit(done.append, 50)  # a job after the pool went idle starts a thread again
    wait_until(lambda: 50 in done, 20, "a job after the idle threads ended")
