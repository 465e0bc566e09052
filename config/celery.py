import os
from typing import Any

from celery import Celery
from celery.signals import worker_init, worker_ready

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("config")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()


@app.task(name="config.outbox_sweep", ignore_result=True)
def outbox_sweep() -> int:
    """Send the jobs accepted while the broker was unreachable (core/outbox.py); the number
    sent."""
    from core.outbox import outbox_sweep as sweep

    return sweep()


@worker_init.connect
def _before_a_worker_starts(sender: Any, **kwargs: Any) -> None:
    from core.shared_key import shared_key_required

    shared_key_required("A Celery worker")  # its exports must name annotators as the web does


@worker_ready.connect
def _when_a_worker_starts(sender: Any, **kwargs: Any) -> None:
    from operations.heartbeat import heartbeat_start

    heartbeat_start(sender.hostname)
    outbox_sweep()
