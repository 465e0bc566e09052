from django.contrib import admin
from django.contrib.auth import views as auth_views
from django.http import HttpResponse
from django.urls import include, path

from config.login_forms import LimitedAuthenticationForm
from operations.views import metrics, readyz


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


# A lost database answers 503 with Retry-After, any other error the usual 500.
handler500 = "config.unavailable.server_error_or_unavailable"

# Both sign-in forms count failed attempts (config/login_limits.py); the admin's is set by
# config/admin.py.
urlpatterns = [
    path("healthz", healthz, name="healthz"),  # liveness: the process answers
    path("readyz", readyz, name="readyz"),  # readiness: database, Redis, workers, queue
    path("metrics", metrics, name="metrics"),  # Prometheus, for operators
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    # Before django.contrib.auth.urls, whose "login" this replaces.
    path(
        "accounts/login/",
        auth_views.LoginView.as_view(authentication_form=LimitedAuthenticationForm),
        name="login",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotation.urls")),
    path("", include("judging.urls")),
    path("", include("dashboards.urls")),
]
