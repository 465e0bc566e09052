from django.http import JsonResponse
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_safe

from operations.readiness import readiness


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
