"""The signature a receiver checks: `X-Arbiter-Signature: t=<unix seconds>,v1=<hex>`, the
HMAC-SHA256 with the destination's secret of the timestamp, a dot and the raw request body.
The timestamp is signed with the body so that a captured delivery cannot be replayed later:
the receiver rejects a signature older than a few minutes (README, "Webhooks for pipelines";
the reference check is devtools/webhook_receiver.py)."""

import hashlib
import hmac


def signature(secret: str, body: bytes, timestamp: int) -> str:
    signed = f"{timestamp}.".encode() + body
    digest = hmac.new(secret.encode(), signed, hashlib.sha256).hexdigest()
    return f"t={timestamp},v1={digest}"
