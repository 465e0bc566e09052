"""Pages that htmx also fetches in part: one rule for "does this request want a fragment?".

`request.htmx` comes from django-htmx's middleware. A history restore (the user went Back
and htmx lost its cached page) is an htmx request that needs the whole page, and every such
response varies on HX-Request, so no cache hands a fragment to a plain visit or the reverse.
"""

from typing import Any, TypeVar

from django.http import HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.utils.cache import patch_vary_headers
from django_htmx.middleware import HtmxDetails

_Response = TypeVar("_Response", bound=HttpResponseBase)


def wants_fragment(request: HttpRequest) -> bool:
    htmx: HtmxDetails | None = getattr(request, "htmx", None)
    if not htmx:  # no middleware, or not an htmx request
        return False
    return not htmx.history_restore_request


def render_fragment_or_page(
    request: HttpRequest, fragment: str, page: str, context: dict[str, Any], status: int = 200
) -> HttpResponse:
    template = fragment if wants_fragment(request) else page
    return varies_on_htmx(render(request, template, context, status=status))


def varies_on_htmx(response: _Response) -> _Response:
    patch_vary_headers(response, ["HX-Request"])
    return response
