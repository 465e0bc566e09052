"""Pages that htmx also fetches in part: one rule for "does this request want a fragment?".

`request.htmx` comes from django-htmx's middleware. A history restore (the user went Back
and htmx lost its cached page) is an htmx request that needs the whole page, and every such
response varies on HX-Request, so no cache hands a fragment to a plain visit or the reverse.
"""

from django.shortcuts import render
from django.utils.cache import patch_vary_headers


def wants_fragment(request) -> bool:
    htmx = getattr(request, "htmx", None)
    return bool(htmx) and not htmx.history_restore_request


def render_fragment_or_page(request, fragment: str, page: str, context: dict, status: int = 200):
    template = fragment if wants_fragment(request) else page
    return varies_on_htmx(render(request, template, context, status=status))


def varies_on_htmx(response):
    patch_vary_headers(response, ["HX-Request"])
    return response
