"""The receiver's check of an Arbiter webhook, as docs/webhooks.md documents it: a reference for
whoever writes a receiver, and what tests/webhooks checks every delivery with.

    from devtools.webhook_receiver import signature_check
    if not signature_check(secret, request.headers["X-Arbiter-Signature"], raw_body):
        return 401

A delivery is accepted when its signature header `t=<unix seconds>,v1=<hex>` carries the
HMAC-SHA256 of `t`, a dot and the raw body, compared in constant time, and `t` is within
five minutes of the receiver's clock: a captured delivery replayed later is refused (a
retry is signed afresh, so it passes).
"""

import hashlib
import hmac
import time

TOLERANCE_SECONDS = 5 * 60


def signature_check(
    secret: str,
    header: str,
    body: bytes,
    *,
    now: float | None = None,
    tolerance: int = TOLERANCE_SECONDS,
) -> bool:
    fields = dict(item.strip().split("=", 1) for item in (header or "").split(",") if "=" in item)
    try:
        timestamp = int(fields["t"])
    except (KeyError, ValueError):
        return False
    if abs((time.time() if now is None else now) - timestamp) > tolerance:
        return False
    signed = f"{timestamp}.".encode() + body
    expected = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return hmac.compare_digest(expected, fields.get("v1", ""))
