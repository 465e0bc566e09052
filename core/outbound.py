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

Retries are the caller's: a judge's call (judging/retry.py) and a webhook delivery
(webhooks/sending.py) each keep their schedule; a refused address is never retried.
"""

import asyncio
import ipaddress
import socket
from collections.abc import Coroutine
from concurrent.futures import ThreadPoolExecutor
from typing import Any, TypeVar

import aiohttp
from django.conf import settings

T = TypeVar("T")


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
