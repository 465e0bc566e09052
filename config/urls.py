from django.contrib import admin
from django.http import HttpRequest, HttpResponse
from django.urls import include, path
from django.views.i18n import JavaScriptCatalog

from config import account_views, help_pages, oidc
from operations.views import metrics, readyz


def healthz(request: HttpRequest) -> HttpResponse:
    return HttpResponse("ok", content_type="text/plain")


# A lost database answers 503 with Retry-After, any other error the usual 500.
handler500 = "core.unavailable.server_error_or_unavailable"

# Both sign-in forms count failed attempts (core/login_limits.py); the admin's is set by
# config/admin.py. Password reset only where mail is sent, and counted
# (config/account_views.py).
urlpatterns = [
    path("healthz", healthz, name="healthz"),  # liveness: the process answers
    path("readyz", readyz, name="readyz"),  # readiness: database, Redis, workers, queue
    path("metrics", metrics, name="metrics"),  # Prometheus, for operators
    path("admin/", admin.site.urls),
    # The header's language switch (POST, CSRF) and the strings of the pages' scripts.
    path("i18n/", include("django.conf.urls.i18n")),
    path("jsi18n/", JavaScriptCatalog.as_view(), name="javascript-catalog"),
    path("api/", include("api.urls")),
    # The guides for experts and leads, read from docs/guide/ (config/help_pages.py).
    path("help/", help_pages.help_index, name="help"),
    path("help/<slug:page>/", help_pages.help_view, name="help-page"),
    # Before django.contrib.auth.urls, whose "login" and password-reset pages these replace.
    path("accounts/login/", account_views.SignInView.as_view(), name="login"),
    path(
        "accounts/password_reset/",
        account_views.PasswordResetView.as_view(),
        name="password_reset",
    ),
    path(
        "accounts/password_reset/done/",
        account_views.PasswordResetDoneView.as_view(),
        name="password_reset_done",
    ),
    path(
        "accounts/reset/<uidb64>/<token>/",
        account_views.PasswordResetConfirmView.as_view(),
        name="password_reset_confirm",
    ),
    path(
        "accounts/reset/done/",
        account_views.PasswordResetCompleteView.as_view(),
        name="password_reset_complete",
    ),
    # The account's API tokens: list, make, revoke (config/account_views.py).
    path("accounts/tokens/", account_views.api_tokens, name="api-tokens"),
    path(
        "accounts/tokens/<int:token_id>/revoke/",
        account_views.api_token_revoke_view,
        name="api-token-revoke",
    ),
    path("accounts/", include("django.contrib.auth.urls")),
    # Sign-in through the organisation's OpenID provider (404 unless configured).
    path("oidc/authenticate/", oidc.AuthenticateView.as_view(), name="oidc-authenticate"),
    path("oidc/callback/", oidc.CallbackView.as_view(), name="oidc-callback"),
    path("", include("annotation.urls")),
    path("", include("setup.urls")),
    path("", include("imports.urls")),
    path("", include("judging.urls")),
    path("", include("dashboards.urls")),
    path("", include("notifications.urls")),
    path("", include("webhooks.urls")),
    path("", include("audit.urls")),
]
