"""The signature a receiver checks: `X-Arbiter-Signature: sha256=<hex>`, the HMAC-SHA256 of
the raw request body with the destination's secret (compare it in constant time)."""

import hashlib
import hmac


def signature(secret: str, body: bytes) -> str:
    return "sha256=" + hmac.new(secret.encode(), body, hashlib.sha256).hexdigest()
