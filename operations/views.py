from django.http import Http404, HttpResponse, JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe
from prometheus_client import CONTENT_TYPE_LATEST
from rest_framework.authentication import get_authorization_header

from operations.prometheus import metrics_text
from operations.readiness import readiness
from projects.services.api_tokens import api_token_use


@never_cache
@require_safe
def readyz(request):
    """200 when the database, Redis and a worker are there, else 503 naming what is not."""
    checks = readiness()
    failing = sorted(name for name, check in checks.items() if not check.ok)
    body = {
        "status": "ok" if not failing else "unavailable",
        "failing": failing,
        "checks": {name: check.as_dict() for name, check in checks.items()},
    }
    return JsonResponse(body, status=503 if failing else 200)


@never_cache
@require_safe
def metrics(request):
    """Prometheus metrics for operators (a superuser's session or API token; a token limited
    to one project does not reach the whole server's figures); anyone else gets the 404 of a
    page that does not exist."""
    user = request.user
    if not user.is_superuser:
        user = _token_user(request) or user
    if not (user.is_active and user.is_superuser):
        raise Http404("no such page")
    return HttpResponse(metrics_text(), content_type=CONTENT_TYPE_LATEST)


def _token_user(request):
    """The user of a usable all-projects API token in `Authorization: Token <key>`, else None."""
    words = get_authorization_header(request).split()
    if len(words) != 2 or words[0].lower() != b"token":
        return None
    try:
        token = api_token_use(key=words[1].decode("ascii"))
    except UnicodeError:
        return None
    if token is None or token.project_id is not None:
        return None
    return token.user
