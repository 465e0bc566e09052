"""Worker heartbeats in the database: a thread of each Celery worker's main process writes
its row every HEARTBEAT_SECONDS from the moment the worker is ready (config/celery.py)."""

import logging
import threading
import time

from django.db import DatabaseError, connection
from django.utils import timezone

from operations.models import WorkerHeartbeat

logger = logging.getLogger(__name__)

HEARTBEAT_SECONDS = 10
STALE_SECONDS = 25


def heartbeat_beat(worker: str) -> None:
    WorkerHeartbeat.objects.update_or_create(
        worker=worker[:255], defaults={"seen_at": timezone.now()}
    )


def heartbeat_start(worker: str) -> threading.Thread:
    """Beat for `worker` until the process ends (a daemon thread); a beat that fails (the
    database is down) is logged and tried again at the next one."""

    def beat_forever():
        while True:
            try:
                heartbeat_beat(worker)
            except DatabaseError as error:
                logger.warning("heartbeat of %s not written: %s", worker, error)
            finally:
                connection.close()
            time.sleep(HEARTBEAT_SECONDS)

    thread = threading.Thread(target=beat_forever, name="heartbeat", daemon=True)
    thread.start()
    return thread
