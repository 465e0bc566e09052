"""Keeps the request being answered for the audit trail's entries (audit/recording.py)."""

from audit.recording import request_context


class RequestContextMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        with request_context(request):
            return self.get_response(request)
