"""A judge's concurrency limit and requests-per-minute budget.

With Redis (the full stack) both are shared by every chunk of every worker calling the same
judge: the budget is a GCRA schedule (each request reserves the next free instant, spaced
60/rpm seconds apart) and the concurrency is a sorted set of in-flight tokens whose stale
entries (a killed worker's) expire. Without Redis (embedded mode, one process) the same
rules hold in memory.
"""

import asyncio
import random
import time
import uuid
from contextlib import asynccontextmanager

from judging.models import Judge

_POLL_SECONDS = 0.005

# One round trip per call: take a concurrency slot (KEYS[1], a sorted set of in-flight tokens
# whose stale entries expire) and, if one is free, reserve the next instant of the GCRA
# schedule (KEYS[2], the theoretical arrival time). ARGV: limit, token, stale-after µs,
# interval µs. Returns -1 when no slot is free, else the µs to wait before calling.
_ACQUIRE = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(ARGV[3]))
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[1]) then
  return -1
end
redis.call('ZADD', KEYS[1], now, ARGV[2])
redis.call('PEXPIRE', KEYS[1], 3600000)
local tat = tonumber(redis.call('GET', KEYS[2]) or '0')
if tat < now then tat = now end
redis.call('SET', KEYS[2], tat + tonumber(ARGV[4]), 'PX', 3600000)
return tat - now
"""


class LocalLimits:
    """One process: an asyncio semaphore and an in-memory GCRA schedule."""

    def __init__(self, judge: Judge):
        self.interval = 60.0 / judge.requests_per_minute
        self.semaphore = asyncio.Semaphore(judge.concurrency)
        self.next_free = 0.0

    @asynccontextmanager
    async def slot(self):
        async with self.semaphore:
            now = time.monotonic()
            start = max(now, self.next_free)
            self.next_free = start + self.interval
            if start > now:
                await asyncio.sleep(start - now)
            yield

    async def close(self):
        pass


class RedisLimits:
    """Shared across processes through Redis; see the module docstring."""

    def __init__(self, judge: Judge, redis_url: str):
        from redis import asyncio as redis_asyncio

        self.client = redis_asyncio.from_url(redis_url)
        self.limit = judge.concurrency
        self.interval_us = int(60_000_000 / judge.requests_per_minute)
        # An entry older than this belongs to a dead worker: an attempt is cut off at the
        # judge's timeout (see runner), so a live one never holds a slot that long.
        self.stale_us = int((judge.timeout_seconds + 5) * 1_000_000)
        self.inflight_key = f"arbiter:judge:{judge.pk}:inflight"
        self.schedule_key = f"arbiter:judge:{judge.pk}:tat"
        self.acquire = self.client.register_script(_ACQUIRE)

    @asynccontextmanager
    async def slot(self):
        token = uuid.uuid4().hex
        keys = [self.inflight_key, self.schedule_key]
        args = [self.limit, token, self.stale_us, self.interval_us]
        while (wait_us := await self.acquire(keys=keys, args=args)) < 0:
            await asyncio.sleep(random.uniform(_POLL_SECONDS, 4 * _POLL_SECONDS))
        try:
            if wait_us > 0:
                await asyncio.sleep(wait_us / 1_000_000)
            yield
        finally:
            await self.client.zrem(self.inflight_key, token)

    async def close(self):
        await self.client.aclose()


def limits_for(judge: Judge, redis_url: str | None):
    return RedisLimits(judge, redis_url) if redis_url else LocalLimits(judge)
