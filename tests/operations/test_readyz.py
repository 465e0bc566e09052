"""/readyz: anonymous, no secrets, 200 when the database, Redis and a worker are there, else
503 naming what is not (operations/readiness.py)."""

from datetime import timedelta

import pytest
from django.db import DatabaseError
from django.utils import timezone

from operations.heartbeat import STALE_SECONDS, heartbeat_beat
from operations.models import WorkerHeartbeat
from tests.operations.conftest import _free_port

pytestmark = pytest.mark.django_db


def test_the_embedded_mode_is_ready_with_nothing_but_its_database(client, settings):
    settings.REDIS_URL = None
    settings.CELERY_TASK_ALWAYS_EAGER = True
    answer = client.get("/readyz")
    assert answer.status_code == 200 and answer["Cache-Control"].startswith("max-age=0")
    body = answer.json()
    assert body["status"] == "ok" and body["failing"] == []
    assert body["checks"]["workers"]["state"] == "in-process (embedded mode)"


def test_workers_are_required_in_the_full_stack_and_stale_after_25_s(client, settings):
    settings.REDIS_URL = f"redis://127.0.0.1:{_free_port()}/0"  # nothing listens there
    settings.CELERY_TASK_ALWAYS_EAGER = False
    body = client.get("/readyz").json()
    assert body["failing"] == ["redis", "workers"]
    assert body["checks"]["workers"]["state"] == "no worker has reported"
    assert body["checks"]["queue"]["depth"] is None
    text = client.get("/readyz").content.decode()
    assert "127.0.0.1" not in text and "redis://" not in text  # states only, no addresses

    heartbeat_beat("celery@worker-1")
    assert client.get("/readyz").json()["failing"] == ["redis"]
    WorkerHeartbeat.objects.update(seen_at=timezone.now() - timedelta(seconds=STALE_SECONDS + 1))
    answer = client.get("/readyz")
    assert answer.status_code == 503
    assert answer.json()["checks"]["workers"]["state"] == "stale"


@pytest.mark.redis
def test_all_well_is_200_with_the_queue_depth(client, settings):
    settings.CELERY_TASK_ALWAYS_EAGER = False
    heartbeat_beat("celery@worker-1")
    answer = client.get("/readyz")
    assert answer.status_code == 200, answer.json()
    assert isinstance(answer.json()["checks"]["queue"]["depth"], int)


def test_a_database_down_is_named(client, settings, monkeypatch):
    settings.REDIS_URL = None
    from operations import readiness

    class Down:
        def __enter__(self):
            raise DatabaseError("connection refused")

        def __exit__(self, *exc):
            return False

    monkeypatch.setattr(readiness.connection, "cursor", lambda: Down())
    answer = client.get("/readyz")
    assert answer.status_code == 503 and "database" in answer.json()["failing"]
