"""Every HTTP call Arbiter makes goes through here: the judges' providers (live and batch),
the judge's call check and the webhooks. One client (aiohttp) and one rule for where it may
connect:

- A private, loopback, link-local, multicast or reserved address is refused at connect time,
  whatever name led to it (a DNS answer that changes between a check and the connection
  cannot slip through: the address checked is the one the socket connects to), unless the
  operator allows them (ARBITER_ALLOW_PRIVATE_ADDRESSES: a judge served on the same network,
  a receiver inside the organisation; the tests, whose servers are on 127.0.0.1).
- No proxy from the environment (trust_env off), no redirect followed (callers pass
  allow_redirects=False and treat a 3xx as a failed attempt), a total timeout per attempt.
- Every retry is declared here (`RetryPolicy`): a judge's call (`JUDGE_CALL_RETRIES`, run by
  judging/retry.py within the call) and a webhook delivery (`webhook_delivery_retries`, each
  retry a time stored on the delivery, webhooks/sending.py). A refused address is never
  retried by a judge's call.

The sign-in provider's documents (OIDC discovery, the JWKS; config/oidc.py) are fetched here
too, from synchronous code (`json_fetch`).
"""

import asyncio
import ipaddress
import json
import random
import socket
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any, TypeVar

import aiohttp
from django.conf import settings
from django.core.exceptions import ImproperlyConfigured

T = TypeVar("T")

# One generator for the jitter of every call: a new random.Random() per call seeds itself
# from the OS, which cost 0.14 ms a call in the runner's profile (hundreds of calls a second).
_JITTER = random.Random()


@dataclass(frozen=True)
class RetryPolicy:
    """When a failed outbound call is tried again: `max_attempts` attempts in all. The wait
    before the next attempt follows `schedule` when one is given (fixed waits, the last one
    repeated: retries kept as a time in the database), else capped exponential backoff with
    full jitter (retries within the call). A server's Retry-After is honoured, up to
    `max_retry_after`."""

    max_attempts: int = 6
    base_seconds: float = 0.5
    cap_seconds: float = 30.0
    max_retry_after: float = 300.0  # a server asking for longer is treated as this
    schedule: tuple[float, ...] = ()

    def wait_seconds(
        self, attempt: int, retry_after: float | None = None, rng: random.Random | None = None
    ) -> float:
        """Seconds to wait before attempt number `attempt + 1` (attempt counts from 0)."""
        rng = rng or _JITTER
        if retry_after is not None:
            # Honour the server, plus a little jitter so that waiters do not stampede.
            return min(retry_after, self.max_retry_after) + rng.uniform(0, self.base_seconds)
        if self.schedule:
            return self.schedule[min(attempt, len(self.schedule) - 1)]
        return rng.uniform(0, min(self.cap_seconds, self.base_seconds * 2**attempt))

    def last(self, attempts: int) -> bool:
        """Whether the attempt number `attempts` (from 1) is the last one allowed."""
        return attempts >= self.max_attempts


# A judge's call: up to 6 attempts within the call, waits capped at 30 s.
JUDGE_CALL_RETRIES = RetryPolicy(max_attempts=6, base_seconds=0.5, cap_seconds=30.0)


def webhook_delivery_retries() -> RetryPolicy:
    """A webhook delivery: at once, then after each of ARBITER_WEBHOOK_RETRY_SECONDS (one
    attempt more than there are waits), read at each call; a wrong value raises, named."""
    raw = settings.ARBITER_WEBHOOK_RETRY_SECONDS
    try:
        waits = tuple(int(item) for item in raw)
    except (TypeError, ValueError):
        raise ImproperlyConfigured(
            f"ARBITER_WEBHOOK_RETRY_SECONDS={raw!r}: whole numbers of seconds, comma-separated"
        ) from None
    if any(wait < 1 for wait in waits):
        raise ImproperlyConfigured("ARBITER_WEBHOOK_RETRY_SECONDS: every delay at least 1 s")
    return RetryPolicy(max_attempts=len(waits) + 1, schedule=waits)


def run_blocking(call: Coroutine[Any, Any, T]) -> T:
    """Run an outbound call from synchronous code and wait for it: on this thread, or on a
    thread of its own when this one already runs an event loop (a synchronous caller inside
    asynchronous code, where asyncio.run would refuse)."""
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        return asyncio.run(call)
    with ThreadPoolExecutor(max_workers=1, thread_name_prefix="outbound") as thread:
        return thread.submit(asyncio.run, call).result()


class AddressRefused(OSError):
    """The destination resolves to an address outside the public internet, and the operator
    has not allowed those."""


def address_refusal(host: str) -> str | None:
    """Why Arbiter does not connect to this IP address (None when it may)."""
    if settings.ARBITER_ALLOW_PRIVATE_ADDRESSES:
        return None
    try:
        address = ipaddress.ip_address(host.split("%", 1)[0])  # an IPv6 zone is not the address
    except ValueError:
        return "not an IP address"
    if isinstance(address, ipaddress.IPv6Address) and address.ipv4_mapped is not None:
        address = address.ipv4_mapped
    if not address.is_global or address.is_multicast:
        return "a private, loopback or reserved address"
    return None


def _guarded_socket(addr_info) -> socket.socket:
    """aiohttp's socket factory: the address about to be connected to, checked first."""
    family, kind, proto, _, sockaddr = addr_info
    refusal = address_refusal(str(sockaddr[0]))
    if refusal is not None:
        raise AddressRefused(f"refused to connect to {refusal}")
    return socket.socket(family=family, type=kind, proto=proto)


def client_session(*, total_seconds: float, limit: int = 100) -> aiohttp.ClientSession:
    """A session for outbound calls: at most `limit` connections, `total_seconds` for an
    attempt (connection, request and answer), addresses checked at connect time."""
    return aiohttp.ClientSession(
        connector=aiohttp.TCPConnector(limit=limit, socket_factory=_guarded_socket),
        timeout=aiohttp.ClientTimeout(total=total_seconds),
        trust_env=False,
    )


def refused_address(error: BaseException) -> bool:
    """Whether an aiohttp error is the refusal of a private address (not worth a retry)."""
    return isinstance(error, aiohttp.ClientConnectorError) and isinstance(
        error.os_error, AddressRefused
    )


class FetchFailed(Exception):
    """A document could not be fetched: what went wrong, never the server's words."""


MAX_DOCUMENT_BYTES = 1024 * 1024


@dataclass(frozen=True)
class Answer:
    status: int
    content_type: str
    body: bytes


async def _request(
    method: str, url: str, total_seconds: float, headers: dict | None, data: dict | None
) -> Answer:
    async with (
        client_session(total_seconds=total_seconds, limit=1) as session,
        session.request(method, url, headers=headers, data=data, allow_redirects=False) as answer,
    ):
        body = await answer.content.read(MAX_DOCUMENT_BYTES + 1)
        if len(body) > MAX_DOCUMENT_BYTES:
            raise FetchFailed(f"larger than {MAX_DOCUMENT_BYTES} bytes")
        return Answer(answer.status, answer.headers.get("Content-Type", ""), body)


def fetch(
    url: str,
    *,
    total_seconds: float,
    method: str = "GET",
    headers: dict | None = None,
    data: dict | None = None,
) -> Answer:
    """One request, waited for from synchronous code, under this module's rules (a private
    address refused unless allowed, no redirect followed, a total timeout): the answer
    whatever its status (the caller judges it), or FetchFailed when there was none."""
    try:
        return run_blocking(_request(method, url, total_seconds, headers, data))
    except FetchFailed:
        raise
    except TimeoutError:
        raise FetchFailed("no answer in time") from None
    except (aiohttp.ClientError, OSError, ValueError) as error:
        if refused_address(error):
            raise FetchFailed("a private, loopback or reserved address, not allowed") from None
        raise FetchFailed(f"connection failed: {type(error).__name__}") from None


def json_fetch(url: str, *, total_seconds: float) -> Any:
    """GET a JSON document (`fetch`); FetchFailed says why not (a redirect, another status
    than 200, no JSON)."""
    answer = fetch(url, total_seconds=total_seconds)
    if 300 <= answer.status < 400:
        raise FetchFailed(f"HTTP {answer.status}: a redirect, not followed")
    if answer.status != 200:
        raise FetchFailed(f"HTTP {answer.status}")
    try:
        return json.loads(answer.body)
    except ValueError:
        raise FetchFailed("the answer is not JSON") from None
