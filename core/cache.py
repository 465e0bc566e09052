"""Django's Redis cache, with Redis as an accelerator rather than a dependency of every page.

When Redis cannot be reached, each cache operation is answered by this process's memory (a
LocMemCache) instead of raising, and for RETRY_SECONDS after a fault Redis is not tried at all,
so a page does not wait for a connection timeout per operation. The fault is logged at most
once per LOG_EVERY_SECONDS. What that means for each user of the cache (SECURITY.md, "Known
limits"): failed sign-ins and API throttles count per process while Redis is down, and
counters kept in Redis resume when it is back.
"""

import logging
import threading
import time
from collections.abc import Callable
from typing import Any

from django.core.cache.backends.locmem import LocMemCache
from django.core.cache.backends.redis import RedisCache
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

logger = logging.getLogger(__name__)

RETRY_SECONDS = 5.0
LOG_EVERY_SECONDS = 60.0
_FAULTS = (RedisConnectionError, RedisTimeoutError)
_OPERATIONS = (
    "add",
    "get",
    "set",
    "touch",
    "delete",
    "get_many",
    "set_many",
    "delete_many",
    "has_key",
    "incr",
    "clear",
)


class FallbackRedisCache(RedisCache):
    def __init__(self, server: str, params: dict[str, Any]) -> None:
        super().__init__(server, params)
        self._local = LocMemCache(f"redis-fallback-{id(self)}", {})
        self._down_until = 0.0
        self._logged_at = float("-inf")
        self._lock = threading.Lock()

    def _fault(self, operation: str, error: Exception) -> None:
        now = time.monotonic()
        with self._lock:
            self._down_until = now + RETRY_SECONDS
            if now - self._logged_at < LOG_EVERY_SECONDS:
                return
            self._logged_at = now
        logger.error(
            "cache: Redis unreachable (%s on %s: %s); answering from this process's memory, "
            "trying Redis again every %.0f s",
            type(error).__name__,
            operation,
            error,
            RETRY_SECONDS,
        )


def _guarded(name: str) -> Callable[..., Any]:
    redis_operation = getattr(RedisCache, name)

    def operation(self: FallbackRedisCache, *args: Any, **kwargs: Any) -> Any:
        if time.monotonic() >= self._down_until:
            try:
                return redis_operation(self, *args, **kwargs)
            except _FAULTS as error:
                self._fault(name, error)
        return getattr(self._local, name)(*args, **kwargs)

    operation.__name__ = name
    operation.__doc__ = f"RedisCache.{name}, from this process's memory while Redis is down."
    return operation


for _name in _OPERATIONS:
    setattr(FallbackRedisCache, _name, _guarded(_name))
