"""`GET /api/`: where things are (the schema, the docs, the main collections), and the ReDoc
bundle served without its one third-party reference."""

from functools import lru_cache
from pathlib import Path

from django.contrib.staticfiles import finders
from django.http import HttpResponse
from django.urls import reverse
from django.views.decorators.http import require_safe
from drf_spectacular.utils import extend_schema
from rest_framework.decorators import api_view, permission_classes
from rest_framework.permissions import AllowAny
from rest_framework.response import Response

# The collections a script starts from; the rest hangs off their objects (README "REST API").
COLLECTIONS = ("projects", "tasks", "assignments", "ratings", "pairs", "judges", "runs",
               "verdicts", "templates")  # fmt: skip


@extend_schema(exclude=True)  # a map of the API, not part of it
@api_view(["GET"])
@permission_classes([AllowAny])  # links only, like the docs; every collection asks for a login
def index(request):
    def link(name: str) -> str:
        return request.build_absolute_uri(reverse(name))

    return Response(
        {
            "schema": link("api-schema"),
            "docs": link("api-docs"),
            "redoc": link("api-redoc"),
            "token": link("api-token"),
            "collections": {name: link(f"api-{name[:-1]}-list") for name in COLLECTIONS},
        }
    )


# ReDoc draws Redocly's logo from their CDN in its sidebar, with no option to turn it off; the
# policy would block the request (core/csp.py) and log a violation. An empty data: URL
# instead: the image fails without a request and ReDoc hides it.
_REDOC = "drf_spectacular_sidecar/redoc/bundles/redoc.standalone.js"
_LOGO = b"https://cdn.redoc.ly/redoc/logo-mini.svg"


@lru_cache(maxsize=1)
def _redoc_bundle() -> bytes:
    bundle = finders.find(_REDOC)
    if bundle is None:
        raise FileNotFoundError(f"static file {_REDOC} (drf-spectacular-sidecar) not found")
    code = Path(bundle).read_bytes()
    code = code.replace(_LOGO, b"data:,")
    # Its source map is not served from here: no request for it either.
    return code.replace(b"//# sourceMappingURL=redoc.standalone.js.map", b"")


@require_safe
def redoc_bundle(request):
    response = HttpResponse(_redoc_bundle(), content_type="text/javascript; charset=utf-8")
    response["Cache-Control"] = "public, max-age=86400"
    return response
