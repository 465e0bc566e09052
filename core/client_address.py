"""The client's address, for the login limits (core/login_limits.py) and the API throttle.

X-Forwarded-For is anyone's to write: it is read only through ARBITER_TRUSTED_PROXIES hops,
counted from the right (each trusted proxy appends the address it saw). With 0 proxies, or
no header, REMOTE_ADDR is the answer, so a forged header cannot dodge a limit.
"""

from django.conf import settings
from django.http import HttpRequest


def client_address(request: HttpRequest) -> str:
    remote: str = request.META.get("REMOTE_ADDR", "")
    hops: int = settings.ARBITER_TRUSTED_PROXIES
    forwarded: str = request.META.get("HTTP_X_FORWARDED_FOR", "")
    if hops == 0 or not forwarded:
        return remote
    addresses = [part.strip() for part in forwarded.split(",") if part.strip()]
    if not addresses:
        return remote
    return addresses[-min(hops, len(addresses))]
