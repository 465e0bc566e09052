"""An import announces the pairs its experts' ratings decide (pair.decided), and a webhook
subscriber receives every one of them. In the embedded mode (no broker) the deliveries of the
whole import leave as one background job, on the bounded pool of core/outbox.py: a large import
once started a thread per decided pair, thousands for a rated MMRB2 file."""

import pytest

from core import outbox
from imports.services.pair_import import pairs_import
from projects.models import Project
from tests.factories import mmrb2_pair, write_image, write_jsonl
from tests.waiting import wait_until
from tests.webhooks.conftest import SECRET
from webhooks.models import Delivery, Destination, Subscription

# Real threads read what the import committed.
pytestmark = pytest.mark.django_db(transaction=True)

PAIRS = 120


def test_an_import_delivers_every_decided_pair_from_a_bounded_number_of_threads(
    tmp_path, tasks_in_process, monkeypatch, receiver
):
    monkeypatch.setenv("ARBITER_TEST_WEBHOOK_SECRET", SECRET)
    pool = outbox._WorkerPool(outbox.EMBEDDED_WORKERS, idle_seconds=0.5)
    jobs, peak = [], [0]
    submit = pool.submit

    def counted(work, *args):
        jobs.append(work)
        submit(work, *args)
        peak[0] = max(peak[0], pool.threads())

    monkeypatch.setattr(pool, "submit", counted)
    monkeypatch.setattr(outbox, "_EMBEDDED_POOL", pool)
    for name in ("a.png", "b.png"):
        write_image(tmp_path / name)
    # The project exists and subscribes before its rated pairs come in (K = 6 from the file).
    labelled = write_jsonl(tmp_path / "first.jsonl", [mmrb2_pair("labelled", scores=())])
    pairs_import(labelled, project_slug="hooked", task_slug="t2i", images_dir=tmp_path)
    project = Project.objects.get(slug="hooked")
    destination = Destination.objects.create(
        name="hooked", url=receiver.url, secret_env="ARBITER_TEST_WEBHOOK_SECRET"
    )
    destination.projects.set([project])
    Subscription.objects.create(project=project, destination=destination, kinds=["pair.decided"])

    rated = [mmrb2_pair(f"rated-{n}", scores=(5, 6, 5)) for n in range(PAIRS)]
    source = write_jsonl(tmp_path / "rated.jsonl", rated)
    pairs_import(source, project_slug="hooked", task_slug="t2i", images_dir=tmp_path)

    wait_until(
        lambda: Delivery.objects.filter(status="delivered").count() == PAIRS,
        60,
        "every decided pair delivered",
    )
    delivered = sorted(request["json"]["data"]["external_id"] for request in receiver.requests)
    assert delivered == sorted(f"rated-{n}" for n in range(PAIRS))
    assert all(request["signed"] for request in receiver.requests)
    assert {request["json"]["data"]["by"] for request in receiver.requests} == {"consensus"}
    assert len(jobs) == 1  # the import's deliveries, one background job
    assert peak[0] <= outbox.EMBEDDED_WORKERS
