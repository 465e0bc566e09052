"""Failed sign-ins counted per account and per client address, in Django's cache (the
counters of core/rate_limits.py, shared by every limit).

Every login (the /accounts/login/ form, the admin's, POST /api/auth/token/) asks
`login_refusal` before checking a password and reports the outcome. Rules:

- Only failures count; a success clears its account's counter (not the address's, so one
  owned account cannot launder guesses against others from the same address).
- Fixed windows of ARBITER_LOGIN_WINDOW_SECONDS: the window number is part of the key, so a
  counter is one atomic `add` + `incr` and expires by itself with its window.
- The account key is the typed username, normalised and case-folded, whether or not such a
  user exists: the answer, the timing and the counting are the same either way (no
  enumeration), and case variants of a name share one counter.
- A refused attempt is not counted and not checked: the right password is refused too.

Password-reset requests (each one may send a mail) are counted the same way under their own
keys, every request and not only failures: per submitted address, as if it were a username,
and per client address, with the same limits and windows (`password_reset_refusal`).
"""

import hashlib
import math
import time
import unicodedata

from django.conf import settings
from django.core.cache import cache
from django.http import HttpRequest
from django.utils.translation import ngettext

from core.client_address import client_address
from core.rate_limits import count, over_limit, window

KEY_PREFIX = "login-failures"
RESET_KEY_PREFIX = "password-resets"


def refusal_message(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many failed sign-ins; try again in %(minutes)d minute.",
        "Too many failed sign-ins; try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


def _account(username: str) -> str:
    # The sign-in forms and DRF strip the name before looking the user up: "victim " is the
    # account "victim" and must share its count.
    name = unicodedata.normalize("NFKC", username or "").strip().casefold()
    # A fixed-length key whatever is typed (lone surrogates included).
    return hashlib.sha256(name.encode("utf-8", "surrogatepass")).hexdigest()


def _window() -> tuple[int, int]:
    """(window number, seconds until it ends)."""
    return window(settings.ARBITER_LOGIN_WINDOW_SECONDS, time.time())


def _keys(
    request: HttpRequest, username: str, number: int, prefix: str = KEY_PREFIX
) -> dict[str, str]:
    return {
        "account": f"{prefix}:account:{_account(username)}:{number}",
        "address": f"{prefix}:address:{client_address(request)}:{number}",
    }


def _limits() -> dict[str, int]:
    return {
        "account": settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT,
        "address": settings.ARBITER_LOGIN_FAILURES_PER_ADDRESS,
    }


def _refusal(keys: dict[str, str], remaining: int) -> int | None:
    limits = _limits()
    return remaining if over_limit({keys[kind]: limits[kind] for kind in keys}) else None


def _count(keys: dict[str, str], remaining: int) -> None:
    count(list(keys.values()), remaining)


def login_refusal(request: HttpRequest, username: str) -> int | None:
    """Seconds until this username may be tried again from this address; None: go ahead."""
    number, remaining = _window()
    return _refusal(_keys(request, username, number), remaining)


def login_failed(request: HttpRequest, username: str) -> None:
    number, remaining = _window()
    _count(_keys(request, username, number), remaining)


def password_reset_refusal(request: HttpRequest, email: str) -> int | None:
    """Seconds until a reset may be asked again for this address (or from this client
    address); None: go ahead, and this request is counted. A refused request sends nothing."""
    number, remaining = _window()
    keys = _keys(request, email, number, prefix=RESET_KEY_PREFIX)
    wait = _refusal(keys, remaining)
    if wait is None:
        _count(keys, remaining)
    return wait


def login_succeeded(request: HttpRequest, username: str) -> None:
    number, _ = _window()
    cache.delete(_keys(request, username, number)["account"])
