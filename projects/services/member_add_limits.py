"""How often a lead may add existing accounts to projects: at most ADDS_PER_HOUR attempts
per lead and clock hour, whatever the answer, so that the add form cannot be used to try
many names or addresses (its answer does not say whether an account exists; the members list
would, one name at a time). Counted in the cache, like the sign-in limits."""

import time

from django.core.cache import cache

ADDS_PER_HOUR = 30
_HOUR = 3600


def _key(user_id: int, now: float) -> str:
    return f"member-adds:{user_id}:{int(now // _HOUR)}"


def member_add_refusal(user_id: int, *, now: float | None = None) -> int | None:
    """Seconds until the lead may add again, or None when they may now."""
    now = time.time() if now is None else now
    if (cache.get(_key(user_id, now)) or 0) < ADDS_PER_HOUR:
        return None
    return int(_HOUR - now % _HOUR) + 1


def member_add_counted(user_id: int, *, now: float | None = None) -> None:
    """Count one attempt (call for every attempt, whatever its outcome)."""
    now = time.time() if now is None else now
    key = _key(user_id, now)
    cache.add(key, 0, timeout=_HOUR * 2)
    try:
        cache.incr(key)
    except ValueError:  # evicted between add and incr
        cache.set(key, 1, timeout=_HOUR * 2)
