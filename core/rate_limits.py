"""Counters in fixed windows, in Django's cache: the one mechanism behind every limit on what
a person can do repeatedly (failed sign-ins and reset requests, core/login_limits.py;
questions, answers and notes on a pair; webhook re-sends and subscription changes;
notification posts).

- A window's number is part of the key, so a counter is one atomic `add` + `incr` and
  expires by itself with its window: the same on the embedded local-memory cache and on
  Redis (both make `incr` atomic).
- `rate_limit_take` counts a request under every key by an atomic increment, and gives the
  counts back when one is over its limit: a refused request is not counted, stores nothing
  and sends nothing, and the person may act again when the window ends
  (`RateLimited.retry_after`). `over_limit` and `count` are the two halves for a limit
  that counts only some outcomes (failed sign-ins, core/login_limits.py).
- Limits are named actions (`LIMITS`): each is a number per window, per user and, where a
  second key matters (a project's re-sends from all its leads), per that key as well. The
  operator may change one with ARBITER_RATE_LIMITS ({"action": [count, seconds]}).
"""

from __future__ import annotations

import math
import time
from contextlib import suppress
from dataclasses import dataclass

from django.conf import settings
from django.core.cache import cache
from django.http import HttpResponse
from django.shortcuts import render
from django.utils.translation import ngettext

from core.errors import DomainError


@dataclass(frozen=True)
class Limit:
    count: int
    seconds: int


# Generous for a person, tight for a script: a lead answers a queue of questions at a human
# pace; nobody asks 12 questions or re-sends a delivery 10 times in two seconds.
LIMITS: dict[str, Limit] = {
    "question.ask": Limit(5, 10 * 60),
    "question.answer": Limit(30, 10 * 60),
    "pair.note": Limit(30, 10 * 60),
    "webhook.resend": Limit(5, 60),
    "webhook.subscription": Limit(20, 10 * 60),
    "notification.post": Limit(60, 60),
}


class RateLimited(DomainError):
    """Too many of one action in its window (HTTP 429, unlike its base: not the input's fault
    nor the state's, only the pace). `retry_after`: seconds until the window ends."""

    status = 429

    def __init__(self, retry_after: int):
        minutes = max(1, math.ceil(retry_after / 60))
        message = ngettext(
            "Too many requests in a short time; nothing was sent. Try again in %(minutes)d minute.",
            "Too many requests in a short time; nothing was sent. Try again in %(minutes)d "
            "minutes.",
            minutes,
        ) % {"minutes": minutes}
        super().__init__(message)
        self.retry_after = retry_after


def limit_of(action: str) -> Limit:
    """The action's limit (ARBITER_RATE_LIMITS overrides the default); a typo raises."""
    override = getattr(settings, "ARBITER_RATE_LIMITS", {}).get(action)
    if override is not None:
        count, seconds = override
        return Limit(int(count), int(seconds))
    return LIMITS[action]


def window(seconds: int, now: float | None = None) -> tuple[int, int]:
    """(the current window's number, seconds until it ends) for windows of `seconds`."""
    now = time.time() if now is None else now
    number = int(now // seconds)
    return number, max(1, math.ceil((number + 1) * seconds - now))


def over_limit(keys: dict[str, int]) -> bool:
    """Whether any key's counter has reached its limit ({key: limit})."""
    counts = cache.get_many(list(keys))
    return any(counts.get(key, 0) >= limit for key, limit in keys.items())


def count(keys: list[str], remaining: int) -> None:
    """Add one to each counter, which expires with its window (`remaining` seconds)."""
    for key in keys:
        _incr(key, remaining)


def _incr(key: str, remaining: int) -> int:
    cache.add(key, 0, timeout=remaining + 1)
    try:
        return cache.incr(key)
    except ValueError:  # expired between add and incr: the next window starts afresh
        cache.add(key, 1, timeout=remaining + 1)
        return 1


def rate_limit_take(*, action: str, user_id: int, also: str | None = None) -> None:
    """Count one `action` by the user (and under `also`, e.g. the project, whose limit is
    twice the user's) or raise RateLimited when a counter is full. Each counter is taken by
    an atomic increment, and given back when the request is refused: requests at the same
    instant never pass the limit together, and a refused one counts for nothing."""
    limit = limit_of(action)
    number, remaining = window(limit.seconds)
    keys = {f"rate:{action}:user:{user_id}:{number}": limit.count}
    if also is not None:
        keys[f"rate:{action}:{also}:{number}"] = 2 * limit.count
    taken: list[str] = []
    for key, most in keys.items():
        taken.append(key)
        if _incr(key, remaining) > most:
            for key_taken in taken:
                with suppress(ValueError):  # its window ended meanwhile
                    cache.decr(key_taken)
            raise RateLimited(remaining)


def rate_limited_page(request, error: RateLimited, *, back: str) -> HttpResponse:
    """The refusal as a page (429, with Retry-After), with a link `back` where the person was."""
    response = render(request, "rate_limited.html", {"error": error, "back": back}, status=429)
    response["Retry-After"] = str(error.retry_after)
    return response
