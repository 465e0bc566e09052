"""A judge's concurrency, adapted to what its API takes, its requests-per-minute cap, and pauses
a server asks for.

Adaptive concurrency (AIMD, as TCP and Inspect AI do): the judge's `concurrency` is a ceiling.
Calls start with a window of INITIAL_WINDOW slots that grows by one per success (doubling each
round) until the first overload; after it, by one per round of successes (a round: as many
successes as the window). An overload (429, 529, an `overloaded_error` body) cuts the window once
per overload episode: only a call let through since the last cut tells something new (calls let
through before it were sent under the old window, and their refusals are ignored). The cut is
to DECREASE times the smaller of the window and the refused call's slot number (how many calls
were in flight when it was let through, itself included, so about where the API's capacity
is), never below DEEPEST_CUT times the window: slow start, which may have doubled past the
capacity, ends in one cut instead of a cascade of refusals. A `Retry-After` pauses every call
of the judge until then.

With Redis (the full stack) all of it is shared by every chunk of every worker calling the same
judge, one Lua call per step (a finishing call hands its slot to the next call of its chunk in
the same call): the window and its state in a hash, the in-flight calls in a
sorted set whose stale entries (a killed worker's) expire, the rpm budget as a GCRA schedule
(each request reserves the next free instant, 60/rpm seconds apart), and the pause. Without
Redis (embedded mode, one process) the same rules hold in memory (`Window`). Every change of
the window is recorded (`changes`: (unix time, window)) for the run page's chart.
"""

import asyncio
import random
import time
import uuid
from contextlib import asynccontextmanager
from dataclasses import dataclass

from judging.backends import CallFailed
from judging.models import Judge

_POLL_SECONDS = 0.005
# A slot handed to the next call of a chunk is used at once or not at all: older than this,
# it is given back and a fresh one taken (its rpm wait may predate a pause set since).
HANDOVER_FRESH_SECONDS = 0.05
INITIAL_WINDOW = 16
# 0.9 rather than TCP's 0.5 or the 0.8 used before: against an API whose capacity is the
# limit the window saws between DECREASE x capacity and capacity, so the cut sets the share of
# the capacity left unused (0.8 cost 8-10 % of it, 0.9 about 4 %, for about one more refused
# request every second, under 2 % of them). A sudden drop of the capacity still converges in
# a few rounds: each round's first overload cuts again.
DECREASE = 0.9
# One refusal never more than halves the window (a call refused while alone in flight may be
# someone else's load on a shared API key, not this judge's capacity).
DEEPEST_CUT = 0.5
MAX_CHANGES = 2000  # kept per chunk: the chart needs the shape, not every step


def cut(size: float, slot_number: int) -> float:
    """The window after an overload of the call let through as `slot_number` (the Lua
    `release` below applies the same rule)."""
    return max(1.0, size * DEEPEST_CUT, min(size, slot_number) * DECREASE)


class Window:
    """The AIMD window in memory (plain Python; RedisLimits runs the same rules in Lua)."""

    def __init__(self, ceiling: int):
        self.ceiling = ceiling
        self.size = float(min(ceiling, INITIAL_WINDOW))
        self.threshold = float(ceiling)  # slow start below it
        self.episode = 0  # counts the cuts: a call let through in an earlier one is old news

    @property
    def slots(self) -> int:
        return max(1, int(self.size))

    def succeeded(self) -> bool:
        """One success; True when the number of slots changed."""
        before = self.slots
        step = 1.0 if self.size < self.threshold else 1.0 / self.size
        self.size = min(float(self.ceiling), self.size + step)
        return self.slots != before

    def overloaded(self, episode: int, slot_number: int) -> bool:
        """An overload of a call let through in `episode` as `slot_number`; True when it cut
        the window."""
        if episode != self.episode:
            return False
        self.size = self.threshold = cut(self.size, slot_number)
        self.episode += 1
        return True


class _Changes:
    def __init__(self) -> None:
        self.changes: list[tuple[float, int]] = []

    def _record(self, slots: int) -> None:
        if len(self.changes) < MAX_CHANGES:
            self.changes.append((round(time.time(), 3), slots))


class LocalLimits(_Changes):
    """One process: the window, the rpm schedule and the pause in memory."""

    def __init__(self, judge: Judge):
        super().__init__()
        self.window = Window(judge.concurrency)
        rpm = judge.requests_per_minute
        self.interval = 60.0 / rpm if rpm else 0.0
        self.next_free = 0.0
        self.paused_until = 0.0
        self.in_flight = 0
        self.changed = asyncio.Condition()
        self._record(self.window.slots)

    @asynccontextmanager
    async def slot(self):
        async with self.changed:
            await self.changed.wait_for(lambda: self.in_flight < self.window.slots)
            self.in_flight += 1
            slot_number, episode = self.in_flight, self.window.episode
        try:
            while (wait := self.paused_until - time.monotonic()) > 0:
                await asyncio.sleep(wait)
            now = time.monotonic()
            start = max(now, self.next_free)
            self.next_free = start + self.interval
            if start > now:
                await asyncio.sleep(start - now)
            try:
                yield
            except CallFailed as failure:
                self._failed(failure, slot_number, episode)
                raise
            if self.window.succeeded():
                self._record(self.window.slots)
        finally:
            async with self.changed:
                self.in_flight -= 1
                # Wake as many waiters as there are free slots, not all of them: at hundreds of
                # calls a second, waking every waiter on every answer costs a core.
                self.changed.notify(max(0, self.window.slots - self.in_flight))

    def _failed(self, failure: CallFailed, slot_number: int, episode: int) -> None:
        if failure.retry_after:
            self.paused_until = max(self.paused_until, time.monotonic() + failure.retry_after)
        if failure.overloaded and self.window.overloaded(episode, slot_number):
            self._record(self.window.slots)

    async def close(self):
        pass


# The two steps as Lua functions, shared by the scripts below.
# acquire(token, stale-after µs, rpm interval µs, ceiling, initial window): {-1, 0, 0} when no
# slot is free, else {the µs to wait (a pause, then the rpm schedule), the token's slot number
# (calls in flight with it), the episode (cuts so far)}.
# release(token, outcome "ok" | "overloaded" | "other", retry-after µs, ceiling, the call's
# slot number and episode, decrease, deepest cut): {slots now, 1 if they changed else 0}.
_FUNCTIONS = """
local function now_us()
  local t = redis.call('TIME')
  return tonumber(t[1]) * 1000000 + tonumber(t[2])
end

local function acquire(token, stale_us, interval_us, ceiling, initial)
  local now = now_us()
  if redis.call('EXISTS', KEYS[3]) == 0 then
    -- cut_at: read by the workers of the release before episodes (a rolling deploy)
    redis.call('HSET', KEYS[3], 'size', initial, 'threshold', ceiling, 'episode', 0, 'cut_at', 0)
  end
  redis.call('PEXPIRE', KEYS[3], 3600000)
  local size = tonumber(redis.call('HGET', KEYS[3], 'size'))
  local slots = math.max(1, math.floor(size))
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now - tonumber(stale_us))
  if redis.call('ZCARD', KEYS[1]) >= slots then
    return {-1, 0, 0}
  end
  redis.call('ZADD', KEYS[1], now, token)
  redis.call('PEXPIRE', KEYS[1], 3600000)
  local number = redis.call('ZCARD', KEYS[1])
  local episode = tonumber(redis.call('HGET', KEYS[3], 'episode') or '0')
  local pause = tonumber(redis.call('GET', KEYS[4]) or '0')
  local tat = tonumber(redis.call('GET', KEYS[2]) or '0')
  if tat < now then tat = now end
  if tat < pause then tat = pause end
  redis.call('SET', KEYS[2], tat + tonumber(interval_us), 'PX', 3600000)
  return {tat - now, number, episode}
end

local function release(token, outcome, retry_after_us, ceiling, number, episode, decrease,
                       deepest)
  local now = now_us()
  redis.call('ZREM', KEYS[1], token)
  local retry_after = tonumber(retry_after_us)
  if retry_after > 0 then
    local pause = tonumber(redis.call('GET', KEYS[4]) or '0')
    if now + retry_after > pause then
      redis.call('SET', KEYS[4], now + retry_after, 'PX', math.ceil(retry_after / 1000) + 1000)
    end
  end
  if redis.call('EXISTS', KEYS[3]) == 0 then return {tonumber(ceiling), 0} end
  local size = tonumber(redis.call('HGET', KEYS[3], 'size'))
  local threshold = tonumber(redis.call('HGET', KEYS[3], 'threshold'))
  local before = math.max(1, math.floor(size))
  if outcome == 'ok' then
    local step = 1
    if size >= threshold then step = 1 / size end
    size = math.min(tonumber(ceiling), size + step)
  elseif outcome == 'overloaded' then
    local current = tonumber(redis.call('HGET', KEYS[3], 'episode') or '0')
    if tonumber(episode) == current then
      size = math.max(1, size * tonumber(deepest),
                      math.min(size, tonumber(number)) * tonumber(decrease))
      redis.call('HSET', KEYS[3], 'threshold', tostring(size), 'episode', current + 1)
    end
  end
  redis.call('HSET', KEYS[3], 'size', tostring(size))
  local after = math.max(1, math.floor(size))
  if after == before then return {after, 0} end
  return {after, 1}
end
"""
_ACQUIRE = _FUNCTIONS + "return acquire(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5])"
_RELEASE = (
    _FUNCTIONS
    + "return release(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])"
)
# A finished call's slot handed to a call of the same chunk that waits for one, in one round
# trip instead of two: release ARGV[1..8], then acquire for the token ARGV[9] (stale-after,
# interval, initial: ARGV[10..12]). {slots now, changed, then the acquire's three answers}.
_HANDOVER = (
    _FUNCTIONS
    + """
local released = release(ARGV[1], ARGV[2], ARGV[3], ARGV[4], ARGV[5], ARGV[6], ARGV[7], ARGV[8])
local taken = acquire(ARGV[9], ARGV[10], ARGV[11], ARGV[4], ARGV[12])
return {released[1], released[2], taken[1], taken[2], taken[3]}
"""
)


@dataclass(frozen=True)
class _Slot:
    """A slot of the judge taken in Redis: its token, the µs to wait before the call, and what
    an overload of the call needs (its slot number and episode, see `cut`)."""

    token: str
    wait_us: int
    number: int
    episode: int


class RedisLimits(_Changes):
    """Shared across processes through Redis; see the module docstring."""

    def __init__(self, judge: Judge, redis_url: str):
        from redis import asyncio as redis_asyncio

        super().__init__()
        self.client = redis_asyncio.from_url(redis_url)
        self.ceiling = judge.concurrency
        rpm = judge.requests_per_minute
        self.interval_us = int(60_000_000 / rpm) if rpm else 0
        # An entry older than this belongs to a dead worker: an attempt is cut off at the
        # judge's timeout (see runner), so a live one never holds a slot that long.
        self.stale_us = int((judge.timeout_seconds + 5) * 1_000_000)
        prefix = f"arbiter:judge:{judge.pk}"
        self.inflight_key = f"{prefix}:inflight"
        self.schedule_key = f"{prefix}:tat"
        self.window_key = f"{prefix}:window"
        self.pause_key = f"{prefix}:pause"
        self.keys = [self.inflight_key, self.schedule_key, self.window_key, self.pause_key]
        self.acquire = self.client.register_script(_ACQUIRE)
        self.release = self.client.register_script(_RELEASE)
        self.handover = self.client.register_script(_HANDOVER)
        # Slots taken in Redis by a finishing call for the next call of this chunk: [(slot,
        # monotonic time of the handover)]; `wanting` counts the calls past the local gate
        # without a Redis slot, `handing` the handovers under way.
        self.handed: list[tuple[_Slot, float]] = []
        self.wanting = 0
        self.handing = 0
        self.queued = 0  # calls waiting at the local gate: they will want a slot next
        # A local gate in front of Redis: no more of this chunk's calls wait on (poll) Redis
        # than the window last seen holds, so a small window is not a storm of polls.
        self.known_slots = min(self.ceiling, INITIAL_WINDOW)
        self.local = 0
        self.gate: asyncio.Condition | None = None

    @asynccontextmanager
    async def slot(self):
        if self.gate is None:
            self.gate = asyncio.Condition()
            size = await self.client.hget(self.window_key, "size")
            if size:
                self.known_slots = max(1, int(float(size)))
            self._record(self.known_slots)  # the chart starts from the window found
        async with self.gate:
            self.queued += 1
            try:
                await self.gate.wait_for(lambda: self.local < self.known_slots)
            finally:
                self.queued -= 1
            self.local += 1
        try:
            async with self._shared_slot():
                yield
        finally:
            async with self.gate:
                self.local -= 1
                self.gate.notify(max(0, self.known_slots - self.local))

    async def _take(self) -> _Slot:
        """A Redis slot: one a finished call handed over, else acquired (polling while the
        window is full)."""
        self.wanting += 1
        try:
            while True:
                while self.handed:
                    slot, at = self.handed.pop(0)  # oldest first
                    if time.monotonic() - at <= HANDOVER_FRESH_SECONDS:
                        return slot
                    # Kept too long (the window shrank, its successor never came): its wait
                    # may predate a pause, and Redis may have expired it. Free it, ask anew.
                    await self._release_unused(slot)
                token = uuid.uuid4().hex
                initial = min(self.ceiling, INITIAL_WINDOW)
                args = [token, self.stale_us, self.interval_us, self.ceiling, initial]
                wait_us, number, episode = await self.acquire(keys=self.keys, args=args)
                if wait_us >= 0:
                    # A call finishing meanwhile may have handed this call a slot too: free
                    # what no other waiting call will take, or it holds a slot of the judge.
                    while len(self.handed) > self.wanting - 1 + self.queued:
                        await self._release_unused(self.handed.pop()[0])
                    return _Slot(token, int(wait_us), int(number), int(episode))
                await asyncio.sleep(random.uniform(_POLL_SECONDS, 4 * _POLL_SECONDS))
        finally:
            self.wanting -= 1

    def _release_args(self, slot: _Slot, outcome: str, retry_after_us: int) -> list:
        return [
            slot.token, outcome, retry_after_us, self.ceiling, slot.number, slot.episode,
            DECREASE, DEEPEST_CUT,
        ]  # fmt: skip

    async def _give_back(self, slot: _Slot, outcome: str, retry_after_us: int):
        """Release the slot, and when another call of this chunk waits for one (at the local
        gate or for Redis), take its slot in the same round trip. (slots now, changed)."""
        args = self._release_args(slot, outcome, retry_after_us)
        # Calls finishing together count each other's handovers before awaiting: never more
        # slots handed than calls that will take them.
        if self.wanting + self.queued <= len(self.handed) + self.handing:
            slots, changed = await self.release(keys=self.keys, args=args)
            return slots, changed
        successor = uuid.uuid4().hex
        initial = min(self.ceiling, INITIAL_WINDOW)
        args += [successor, self.stale_us, self.interval_us, initial]
        self.handing += 1
        try:
            slots, changed, wait_us, number, episode = await self.handover(
                keys=self.keys, args=args
            )
        finally:
            self.handing -= 1
        if int(wait_us) >= 0:
            taken = _Slot(successor, int(wait_us), int(number), int(episode))
            self.handed.append((taken, time.monotonic()))
        return slots, changed

    async def _release_unused(self, slot: _Slot) -> None:
        await self.release(keys=self.keys, args=self._release_args(slot, "other", 0))

    @asynccontextmanager
    async def _shared_slot(self):
        slot = await self._take()
        outcome, retry_after_us = "other", 0
        try:
            if slot.wait_us > 0:
                await asyncio.sleep(slot.wait_us / 1_000_000)
            yield
            outcome = "ok"
        except CallFailed as failure:
            outcome = "overloaded" if failure.overloaded else "other"
            retry_after_us = int((failure.retry_after or 0) * 1_000_000)
            raise
        finally:
            slots, changed = await self._give_back(slot, outcome, retry_after_us)
            if int(slots) != self.known_slots:
                self.known_slots = int(slots)  # the gate's waiters see it as slots free up
            if changed:
                self._record(int(slots))

    async def close(self):
        while self.handed:  # taken for a call that never came: free them now, not when stale
            slot, _at = self.handed.pop()
            await self._release_unused(slot)
        await self.client.aclose()


def limits_for(judge: Judge, redis_url: str | None):
    return RedisLimits(judge, redis_url) if redis_url else LocalLimits(judge)
