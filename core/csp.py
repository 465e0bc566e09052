"""Content-Security-Policy on every response (Django 5.2 has none built in).

Scripts run only from our own origin or with this response's nonce (`request.csp_nonce`,
for the few inline blocks we keep, e.g. the API docs' start-up script): an injected
<script> or on*= attribute does not run. Styles keep 'unsafe-inline': the admin, Swagger
UI, ReDoc, htmx's indicator style and our progress bars set inline styles, and a style
cannot run code.
"""

import secrets
from collections.abc import Callable
from typing import cast

from django.http import HttpRequest
from django.http.response import HttpResponseBase

POLICY = {
    "default-src": "'self'",
    "script-src": "'self' 'nonce-{nonce}'",
    "style-src": "'self' 'unsafe-inline'",
    "img-src": "'self' data:",
    "font-src": "'self' data:",
    # ReDoc runs its search index in a worker it builds from a blob: URL.
    "worker-src": "'self' blob:",
    "connect-src": "'self'",
    "object-src": "'none'",
    "base-uri": "'none'",
    "frame-ancestors": "'none'",
    "form-action": "'self'",
}


def policy_header(nonce: str) -> str:
    return "; ".join(f"{name} {value.format(nonce=nonce)}" for name, value in POLICY.items())


class NoncedRequest(HttpRequest):
    """A request once this middleware has seen it: templates read its nonce."""

    csp_nonce: str


class ContentSecurityPolicyMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        nonced = cast(NoncedRequest, request)  # this middleware is what adds the nonce
        nonced.csp_nonce = secrets.token_urlsafe(16)
        response = self.get_response(nonced)
        if "Content-Security-Policy" not in response:
            response["Content-Security-Policy"] = policy_header(nonced.csp_nonce)
        return response
