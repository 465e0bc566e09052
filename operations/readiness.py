"""What /readyz reports: the database, Redis, the newest worker heartbeat and the queue depth.
Anonymous, so it names states only: no address, host name or error text."""

from dataclasses import dataclass, field

from django.conf import settings
from django.db import DatabaseError, connection
from django.db.models import Max
from django.utils import timezone

from core.outbox import running_embedded
from operations.heartbeat import STALE_SECONDS
from operations.models import WorkerHeartbeat

QUEUE = "celery"  # Celery's default queue: the only one Arbiter uses


@dataclass
class Check:
    ok: bool
    state: str
    extra: dict = field(default_factory=dict)

    def as_dict(self) -> dict:
        return {"ok": self.ok, "state": self.state, **self.extra}


def readiness() -> dict[str, Check]:
    database = _database()
    client = redis_client()
    redis_check, depth = _redis(client)
    checks = {"database": database, "redis": redis_check, "workers": _workers(database.ok)}
    checks["queue"] = Check(
        True, "not used (embedded mode)" if client is None else "ok" if depth is not None
        else "unknown (Redis unreachable)", {"depth": depth},
    )  # fmt: skip
    return checks


def _database() -> Check:
    try:
        with connection.cursor() as cursor:
            cursor.execute("SELECT 1")
    except DatabaseError:
        return Check(False, "unreachable")
    return Check(True, "ok")


def redis_client():
    """A client that gives up quickly (a probe must not hang), or None without Redis."""
    if not settings.REDIS_URL:
        return None
    import redis

    return redis.Redis.from_url(settings.REDIS_URL, socket_connect_timeout=0.5, socket_timeout=0.5)


def queue_depth(client) -> int | None:
    """Tasks waiting in Celery's queue, or None when Redis cannot say."""
    from redis.exceptions import RedisError

    try:
        return int(client.llen(QUEUE))
    except RedisError:
        return None


def _redis(client) -> tuple[Check, int | None]:
    if client is None:
        return Check(True, "not used (embedded mode)"), None
    from redis.exceptions import RedisError

    try:
        client.ping()
    except RedisError:
        return Check(False, "unreachable"), None
    else:
        return Check(True, "ok"), queue_depth(client)
    finally:
        client.close()


def _workers(database_ok: bool) -> Check:
    if running_embedded():
        return Check(True, "in-process (embedded mode)")
    if not database_ok:
        return Check(False, "unknown (database unreachable)")
    newest = WorkerHeartbeat.objects.aggregate(newest=Max("seen_at"))["newest"]
    if newest is None:
        return Check(False, "no worker has reported")
    age = max(0.0, (timezone.now() - newest).total_seconds())
    extra = {"newest_heartbeat_seconds_ago": round(age, 1), "stale_after_seconds": STALE_SECONDS}
    return Check(age <= STALE_SECONDS, "ok" if age <= STALE_SECONDS else "stale", extra)
