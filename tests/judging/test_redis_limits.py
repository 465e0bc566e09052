"""The judge limits shared through Redis by every chunk calling the same judge."""

import asyncio
import time

import pytest
import redis
from django.conf import settings

from judging.backends import CallFailed
from judging.models import Judge
from judging.rate_limits import (
    DECREASE,
    DEEPEST_CUT,
    HANDOVER_FRESH_SECONDS,
    INITIAL_WINDOW,
    RedisLimits,
)
from tests.waiting import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.django_db, pytest.mark.judge_clock]


def _two_chunks(judge, calls_each: int, call_seconds: float):
    """Two chunks (two RedisLimits, as in two workers) calling at once; returns the peak
    number of calls in flight and their start times."""
    in_flight, peak, starts = 0, 0, []

    async def chunk():
        limits = RedisLimits(judge, settings.REDIS_URL)

        async def call():
            nonlocal in_flight, peak
            async with limits.slot():
                starts.append(time.monotonic())
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(call_seconds)
                in_flight -= 1

        await asyncio.gather(*(call() for _ in range(calls_each)))
        await limits.close()

    async def main():
        limits = RedisLimits(judge, settings.REDIS_URL)
        await limits.client.delete(*limits.keys)
        await limits.close()
        await asyncio.gather(chunk(), chunk())

    asyncio.run(main())
    return peak, sorted(starts)


async def _until_stale(limits, within: float = 5.0) -> None:
    """Wait until Redis's clock (the one the limits read) passes the newest in-flight call's
    start by the limits' staleness: at once when nothing is in flight."""
    newest = await limits.client.zrange(limits.inflight_key, -1, -1, withscores=True)
    if not newest:
        return
    # Read with a client of its own, blocking: nothing else runs in the loop meanwhile.
    clock = redis.Redis.from_url(settings.REDIS_URL)

    def stale() -> bool:
        seconds, micros = clock.time()
        return seconds * 1_000_000 + micros > newest[0][1] + limits.stale_us

    try:
        wait_until(stale, within, "the in-flight calls to go stale", every=0.02)
    finally:
        clock.close()


def test_chunks_share_one_concurrency_limit():
    # The limits are the judge's whatever its backend (an API judge would need a connection).
    judge = Judge.objects.create(
        name="shared-c", backend="random", concurrency=3, requests_per_minute=100_000
    )
    peak, starts = _two_chunks(judge, calls_each=8, call_seconds=0.1)
    assert peak == 3  # not 3 per chunk
    assert len(starts) == 16


def test_chunks_share_one_requests_per_minute_budget():
    judge = Judge.objects.create(
        name="shared-r", backend="random", concurrency=50, requests_per_minute=1200
    )  # 20 per second between both chunks
    _peak, starts = _two_chunks(judge, calls_each=10, call_seconds=0.01)
    # 20 requests at 20 per second: the last starts about 0.95 s after the first, not 0.45.
    assert 0.9 <= starts[-1] - starts[0] <= 3.0


def test_an_overload_seen_by_one_worker_shrinks_every_workers_window():
    judge = Judge.objects.create(
        name="shared-w", backend="random", concurrency=64, requests_per_minute=100_000
    )

    async def main():
        first, second = (RedisLimits(judge, settings.REDIS_URL) for _ in range(2))
        await first.client.delete(*first.keys)
        for _ in range(40):  # slow start: one more slot per success
            async with first.slot():
                pass
        with pytest.raises(CallFailed):
            async with second.slot():
                raise CallFailed("HTTP 429", retryable=True, overloaded=True, retry_after=0.5)
        size = float(await first.client.hget(first.window_key, "size"))
        paused_ms = await first.client.pttl(first.pause_key)
        started = time.monotonic()
        async with first.slot():  # the other worker waits out the pause too
            waited = time.monotonic() - started
        for limits in (first, second):
            await limits.close()
        return first.changes, second.changes, size, paused_ms, waited

    first_changes, second_changes, size, paused_ms, waited = asyncio.run(main())
    grown = INITIAL_WINDOW + 40  # slow start: one more slot per success
    assert first_changes[0][1] == INITIAL_WINDOW and first_changes[-1][1] == grown
    # The second worker found the grown window and cut it: refused while alone in flight,
    # the call says little of the judge's capacity, so the window is halved, not cut to 1.
    assert [slots for _at, slots in second_changes] == [grown, int(grown * DEEPEST_CUT)]
    assert size == pytest.approx(grown * DEEPEST_CUT)
    assert 0 < paused_ms <= 1500 and waited >= 0.4


def test_an_overload_cuts_to_where_the_refused_call_stood_once_per_episode():
    """Slow start ends in one cut: refused as the 25th call in flight of a 40-slot window, a
    call cuts the window to 0.9 × 25; the calls let through before that cut (the 26th...) are
    refused too but cut nothing more, while one let through after it cuts again."""
    judge = Judge.objects.create(
        name="episodes", backend="random", concurrency=128, requests_per_minute=100_000
    )

    async def main():
        limits = RedisLimits(judge, settings.REDIS_URL)
        await limits.client.delete(*limits.keys)
        await limits.client.hset(limits.window_key, mapping={"size": 40, "threshold": 128})
        slots = [await limits._take() for _ in range(30)]
        sizes = []
        for slot in slots[24:]:  # the API took 24: the 25th to 30th are refused
            await limits._give_back(slot, "overloaded", 0)
            sizes.append(float(await limits.client.hget(limits.window_key, "size")))
        for slot in slots[:24]:
            await limits._give_back(slot, "ok", 0)
        after_cut = float(await limits.client.hget(limits.window_key, "size"))
        late = await limits._take()  # let through after the cut, as the 1st in flight
        await limits._give_back(late, "overloaded", 0)
        last = float(await limits.client.hget(limits.window_key, "size"))
        await limits.close()
        return [slot.number for slot in slots], sizes, after_cut, late.episode, last

    numbers, sizes, after_cut, late_episode, last = asyncio.run(main())
    assert numbers == list(range(1, 31))
    assert sizes == [pytest.approx(25 * DECREASE)] * 6
    assert late_episode == 1
    assert last == pytest.approx(max(after_cut * DEEPEST_CUT, 1 * DECREASE))


def test_a_finishing_call_hands_its_slot_over_and_nothing_leaks():
    """One round trip per call in the steady state: a finished call's slot goes to the next
    call of its chunk in the same Lua call; the limit still holds and, once the chunk closes,
    no slot stays taken in Redis."""
    judge = Judge.objects.create(
        name="handover", backend="random", concurrency=4, requests_per_minute=100_000
    )
    in_flight, peak, done, scripts = 0, 0, 0, {"acquire": 0, "release": 0, "handover": 0}

    async def main():
        nonlocal in_flight, peak, done
        limits = RedisLimits(judge, settings.REDIS_URL)
        await limits.client.delete(*limits.keys)
        for name in scripts:
            script = getattr(limits, name)

            async def counted(*args, _script=script, _name=name, **kwargs):
                scripts[_name] += 1
                return await _script(*args, **kwargs)

            setattr(limits, name, counted)

        async def call():
            nonlocal in_flight, peak, done
            async with limits.slot():
                in_flight += 1
                peak = max(peak, in_flight)
                await asyncio.sleep(0.01)
                in_flight -= 1
                done += 1

        await asyncio.gather(*(call() for _ in range(60)))
        await limits.close()
        checker = RedisLimits(judge, settings.REDIS_URL)
        left = await checker.client.zcard(checker.inflight_key)
        await checker.close()
        return left

    left = asyncio.run(main())
    assert done == 60 and peak == 4
    assert left == 0
    assert scripts["handover"] >= 40  # most slots passed on, not released and taken again
    assert scripts["acquire"] + scripts["handover"] <= 64  # no polling storm


async def _calls(limits, count: int, hold: float, live: dict):
    async def call():
        async with limits.slot():
            live["n"] += 1
            live["peak"] = max(live["peak"], live["n"])
            await asyncio.sleep(hold)
            live["n"] -= 1

    await asyncio.gather(*(call() for _ in range(count)))


def test_calls_finishing_together_hand_over_no_slot_to_no_one():
    """Four calls end at once with one left waiting: one slot is handed over, not four; the
    others are freed, so another worker can fill the window without exceeding the ceiling."""
    judge = Judge.objects.create(
        name="handover-tail", backend="random", concurrency=4, requests_per_minute=100_000
    )
    out = {}

    async def main():
        a, b = RedisLimits(judge, settings.REDIS_URL), RedisLimits(judge, settings.REDIS_URL)
        await a.client.delete(*a.keys)
        # 0.8 s stands in for the judge's timeout + 5 s: far above the calls' 0.15 s, so a
        # loaded machine does not make a live call look stale.
        a.stale_us = b.stale_us = 800_000
        live = {"n": 0, "peak": 0}
        await _calls(a, 5, 0.02, live)  # 4 at once, 1 waiting
        out["handed"] = len(a.handed)
        out["held"] = await a.client.zcard(a.inflight_key)
        await _until_stale(a)  # anything left in flight is stale in Redis from then on
        live["peak"] = 0
        b_calls = asyncio.gather(_calls(b, 4, 0.15, live))
        await asyncio.sleep(0.02)
        await asyncio.gather(b_calls, _calls(a, 3, 0.05, live))
        out["peak"] = live["peak"]
        await a.close()
        await b.close()

    asyncio.run(main())
    assert (out["handed"], out["held"]) == (0, 0), out
    assert out["peak"] <= 4, out


def test_a_pause_holds_for_a_chunk_that_had_slots_handed_over():
    judge = Judge.objects.create(
        name="handover-pause", backend="random", concurrency=4, requests_per_minute=100_000
    )
    out = {}

    async def main():
        a, b = RedisLimits(judge, settings.REDIS_URL), RedisLimits(judge, settings.REDIS_URL)
        await a.client.delete(*a.keys)
        await _calls(a, 5, 0.02, {"n": 0, "peak": 0})
        # A slot handed over with no call to take it (as when a call waiting on Redis gets
        # its own slot meanwhile): its wait was computed before the pause below.
        slot = await a._take()
        a.queued += 1  # a call at the gate, as far as the handover can tell
        await a._give_back(slot, "ok", 0)
        a.queued -= 1
        assert len(a.handed) == 1
        # Within HANDOVER_FRESH_SECONDS it counts as a request already sent; past it, never.
        await asyncio.sleep(HANDOVER_FRESH_SECONDS + 0.02)
        try:  # worker B is told to wait 2 s
            async with b.slot():
                raise CallFailed("429", retryable=True, retry_after=2.0)
        except CallFailed:
            pass
        started = time.monotonic()
        async with a.slot():
            out["a_waited"] = time.monotonic() - started
        await a.close()
        await b.close()

    asyncio.run(main())
    assert out["a_waited"] >= 1.8, out


def test_a_call_that_got_its_own_slot_frees_the_one_handed_to_it_meanwhile():
    """A call waiting on Redis for a slot is counted as wanting one, so a call finishing
    meanwhile hands it a second: the spare is freed at once, not held from other workers."""
    judge = Judge.objects.create(
        name="handover-spare", backend="random", concurrency=4, requests_per_minute=100_000
    )
    out = {}

    async def main():
        limits = RedisLimits(judge, settings.REDIS_URL)
        await limits.client.delete(*limits.keys)
        acquire, first = limits.acquire, asyncio.Event()

        async def slow_acquire(*args, **kwargs):
            answer = await acquire(*args, **kwargs)
            if first.is_set():
                await asyncio.sleep(0.2)  # the second call's answer is slow to come back
            first.set()
            return answer

        limits.acquire = slow_acquire

        async def short():
            async with limits.slot():
                await asyncio.sleep(0.05)

        async def late():
            await first.wait()
            async with limits.slot():
                out["held_during"] = await limits.client.zcard(limits.inflight_key)
                out["handed_during"] = len(limits.handed)

        await asyncio.gather(short(), late())
        out["held_after"] = await limits.client.zcard(limits.inflight_key)
        await limits.close()

    asyncio.run(main())
    assert out == {"held_during": 1, "handed_during": 0, "held_after": 0}, out
