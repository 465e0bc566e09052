from django.db import models


class WorkerHeartbeat(models.Model):
    """A Celery worker process saying it is alive (operations/heartbeat.py), every
    HEARTBEAT_SECONDS; /readyz calls the workers stale after STALE_SECONDS without one."""

    worker = models.CharField(max_length=255, unique=True)  # Celery's hostname, e.g. celery@web1
    seen_at = models.DateTimeField()

    def __str__(self) -> str:
        return f"{self.worker} at {self.seen_at:%Y-%m-%d %H:%M:%S}"
