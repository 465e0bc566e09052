"""Keeps the request being answered for the audit trail's entries (audit/recording.py)."""

from collections.abc import Callable

from django.http import HttpRequest, HttpResponse

from audit.recording import request_context


class RequestContextMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]) -> None:
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        with request_context(request):
            return self.get_response(request)
