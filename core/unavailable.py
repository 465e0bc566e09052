"""A short 503 while the database cannot be reached, instead of a 500 (Django's handler500).

Django calls the 500 handler while the exception is being handled, so it can tell a lost
database (OperationalError, InterfaceError: PostgreSQL down or restarting, SQLite busy past its
timeout) from a bug. The page touches neither the database nor the session, which may be what
is down. Connections that died while the database restarted are found by Django's health check
(CONN_HEALTH_CHECKS, config/env.py) before a request uses them, so no request fails once the
database is back.
"""

import sys

from django.db import InterfaceError, OperationalError
from django.http import HttpRequest, HttpResponse, JsonResponse
from django.template.loader import render_to_string
from django.utils.translation import gettext_lazy
from django.views.defaults import server_error

RETRY_AFTER_SECONDS = 10
MESSAGE = gettext_lazy(
    "The database cannot be reached right now; nothing you saved is lost. Try again soon."
)


def server_error_or_unavailable(request: HttpRequest) -> HttpResponse:
    if not isinstance(sys.exc_info()[1], OperationalError | InterfaceError):
        return server_error(request)
    response: HttpResponse
    if request.path.startswith("/api/"):
        response = JsonResponse({"detail": str(MESSAGE)}, status=503)
    else:
        body = render_to_string("503.html", {"message": MESSAGE})
        response = HttpResponse(body, status=503)
    response["Retry-After"] = str(RETRY_AFTER_SECONDS)
    response["Cache-Control"] = "no-store"
    return response
