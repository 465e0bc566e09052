"""`Server-Timing: app;dur=MS` on every response when ARBITER_SERVER_TIMING is on: the time the
request spent inside Django, without the wait in the server's listen queue, which is what
bench.load gates (the annotate page and submit within 150 ms at p95). Off by default:
an operator turns it on to read the figure in the browser's network panel."""

import time
from collections.abc import Callable

from django.conf import settings
from django.http import HttpRequest
from django.http.response import HttpResponseBase


class ServerTimingMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponseBase]) -> None:
        self.get_response = get_response
        self.enabled: bool = settings.ARBITER_SERVER_TIMING

    def __call__(self, request: HttpRequest) -> HttpResponseBase:
        if not self.enabled:
            return self.get_response(request)
        started = time.perf_counter()
        response = self.get_response(request)
        response["Server-Timing"] = f"app;dur={(time.perf_counter() - started) * 1000:.1f}"
        return response
