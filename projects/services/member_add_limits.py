"""How often a lead may add existing accounts to projects: at most ADDS_PER_HOUR attempts
per lead and clock hour, whatever the answer, so that the add form cannot be used to try
many names or addresses (its answer does not say whether an account exists; the members list
would, one name at a time). Counted in the cache, like the sign-in limits.

`membership_add_paced` is the whole rule for a caller that answers a lead (the API): the
limit, then the addition, taking at least ADD_SECONDS whether or not an account matched, and
returning nothing a caller could answer differently."""

import math
import time
from collections.abc import Iterable

from django.core.cache import cache
from django.utils.translation import gettext

from core.errors import DomainError
from projects.models import Project, Task
from projects.services.members import membership_add

ADDS_PER_HOUR = 30
# An addition takes at least this long whether or not an account matched, so that neither
# the answer nor its time tells which accounts exist.
ADD_SECONDS = 0.3
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


class MemberAddsLimited(DomainError):
    """The lead made ADDS_PER_HOUR additions this hour (HTTP 429, unlike its base: only the
    pace is wrong). `retry_after`: seconds until they may add again."""

    status = 429

    def __init__(self, retry_after: int):
        minutes = max(1, math.ceil(retry_after / 60))
        super().__init__(
            gettext("Too many additions: try again in %(minutes)s minutes, or send an invitation.")
            % {"minutes": minutes}
        )
        self.retry_after = retry_after


def membership_add_paced(
    *, project: Project, lead_id: int, identifier: str, role: str, tasks: Iterable[Task] | None
) -> None:
    """`membership_add` on behalf of the lead `lead_id`: refused with MemberAddsLimited past
    ADDS_PER_HOUR attempts this hour, else counted and run, taking at least ADD_SECONDS
    whatever happened. Returns nothing, so that no caller can tell a matched account from
    none; `Invalid` (a role, a task, an empty identifier) comes before any account is
    looked up, so it tells nothing either."""
    wait = member_add_refusal(lead_id)
    if wait is not None:
        raise MemberAddsLimited(wait)
    member_add_counted(lead_id)
    started = time.monotonic()
    try:
        membership_add(project=project, identifier=identifier, role=role, tasks=tasks)
    finally:
        time.sleep(max(0.0, ADD_SECONDS - (time.monotonic() - started)))
