"""The shared counters (core/rate_limits.py) on both caches Arbiter runs with: the embedded
local-memory one and Redis. Requests at the same instant never pass a limit together, a
refused request counts for nothing, and a window's end lets the person act again."""

import threading

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache

from core import rate_limits
from core.rate_limits import RateLimited, rate_limit_take

LOCMEM = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}


@pytest.fixture(params=["locmem", pytest.param("redis", marks=pytest.mark.redis)])
def each_cache(request, settings):
    if request.param == "locmem":
        settings.CACHES = LOCMEM
    else:  # the Redis of this test worker (tests/conftest.py)
        settings.CACHES = {"default": {**django_settings.CACHES["default"]}}
    settings.ARBITER_RATE_LIMITS = {"question.ask": [5, 600]}
    cache.clear()
    yield request.param
    cache.clear()


def _takes(user_id: int, times: int, also: str | None = None) -> list[bool]:
    passed = []
    for _ in range(times):
        try:
            rate_limit_take(action="question.ask", user_id=user_id, also=also)
            passed.append(True)
        except RateLimited:
            passed.append(False)
    return passed


def test_requests_at_the_same_instant_never_pass_the_limit_together(each_cache):
    passed: list[bool] = []
    start = threading.Barrier(20)

    def one() -> None:
        start.wait()
        passed.extend(_takes(1, 1))

    threads = [threading.Thread(target=one) for _ in range(20)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert passed.count(True) == 5 and passed.count(False) == 15


def test_a_refused_request_counts_for_nothing(each_cache):
    assert _takes(1, 8, also="project:9") == [True] * 5 + [False] * 3
    # The project's counter (twice a user's) holds 5, not 8: another user gets 5 more.
    assert _takes(2, 6, also="project:9") == [True] * 5 + [False]


def test_the_window_ends(each_cache, monkeypatch):
    now = [6_000_000.0]  # a window boundary for 600 s windows
    monkeypatch.setattr(rate_limits.time, "time", lambda: now[0])
    assert _takes(1, 6) == [True] * 5 + [False]
    try:
        rate_limit_take(action="question.ask", user_id=1)
    except RateLimited as refused:
        assert refused.retry_after == 600 and refused.status == 429
        assert "Try again in 10 minutes" in refused.message
    now[0] += 600
    assert _takes(1, 1) == [True]
