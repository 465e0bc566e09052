"""The one retry loop of judge calls, following the policy declared with every other retry
(core/outbound.py::JUDGE_CALL_RETRIES: capped exponential backoff with full jitter, honouring
Retry-After). Backends make single attempts; nothing else retries (no SDK sits underneath)."""

import asyncio
import random
from collections.abc import Awaitable, Callable
from dataclasses import dataclass

from core.outbound import RetryPolicy
from judging.backends import CallFailed, Reply


@dataclass
class Outcome:
    reply: Reply | None
    error: str
    attempts: int


async def call_with_retries(
    attempt: Callable[[], Awaitable[Reply]],
    policy: RetryPolicy,
    *,
    rng: random.Random | None = None,
    sleep: Callable[[float], Awaitable[None]] = asyncio.sleep,
) -> Outcome:
    """Run `attempt` until it succeeds, fails for good, or the attempts run out."""
    for number in range(policy.max_attempts):
        try:
            return Outcome(await attempt(), "", number + 1)
        except CallFailed as failure:
            if not failure.retryable:
                return Outcome(None, str(failure), number + 1)
            if number + 1 == policy.max_attempts:
                return Outcome(None, f"{failure} (gave up after {number + 1} attempts)", number + 1)
            await sleep(policy.wait_seconds(number, failure.retry_after, rng))
    raise AssertionError("unreachable")  # pragma: no cover
