"""What a visitor who is not signed in can reach is what SECURITY.md's "anonymous" row says,
and nothing else: every route of the URL configuration, GET and POST, with plausible ids."""

import re

import pytest
from django.conf import global_settings
from django.urls import URLResolver, get_resolver

from tests.factories import queued_pairs

pytestmark = pytest.mark.django_db

# Route → the methods that may answer anonymous visitors with something other than a
# redirect to the sign-in page, 401, 403, 404 or 405 (SECURITY.md, "Roles").
ANONYMOUS = {
    "healthz": {"GET", "POST"},
    "readyz": {"GET", "POST"},
    "admin/login/": {"GET", "POST"},  # the operator's sign-in form
    "admin/logout/": {"GET", "POST"},  # says "signed out"
    "accounts/login/": {"GET", "POST"},
    "accounts/logout/": {"POST"},  # says "signed out"
    "api/": {"GET"},
    "api/schema/": {"GET"},
    "api/docs/": {"GET"},
    "api/redoc/": {"GET"},
    "api/redoc/redoc.standalone.js": {"GET"},
    "api/auth/token/": {"POST"},  # 400: wrong credentials
    "i18n/setlang/": {"GET", "POST"},  # the language switch: POST sets a cookie, GET only redirects
    "jsi18n/": {"GET", "POST"},  # the scripts' translated words, the same for everyone
    # Sign-in through the organisation (404 unless the operator configured a provider): off
    # to the provider's page; its way back (a refusal page without a sign-in started here).
    "oidc/authenticate/": {"GET"},
    "oidc/callback/": {"GET"},
}
_CLOSED = {302, 401, 403, 404, 405}
_VALUES = {"sha256": "0" * 64, "token": "x" * 43, "uidb64": "MQ", "app_label": "auth"}


def _routes(patterns=None, prefix=""):
    for pattern in patterns if patterns is not None else get_resolver().url_patterns:
        route = prefix + str(pattern.pattern)
        if isinstance(pattern, URLResolver):
            yield from _routes(pattern.url_patterns, route)
        else:
            yield route


def _path(route: str, project: str, task: str) -> str:
    """A URL for the route with real ids of the project (so a missing login, not a missing
    object, is what answers)."""
    values = {**_VALUES, "slug": project, "project": project, "project_slug": project}
    values["task_slug"] = task
    route = route.replace("^", "").replace("$", "")
    route = re.sub(r"\(\?P<(\w+)>[^)]*\)", lambda m: values.get(m[1], "1"), route)
    route = re.sub(r"<(?:\w+:)?(\w+)>", lambda m: values.get(m[1], "1"), route)
    return "/" + route.replace(".*", "")


@pytest.mark.parametrize("provider", [False, True], ids=["passwords-only", "with-oidc"])
def test_an_anonymous_visitor_reaches_only_the_documented_routes(
    client, tmp_path, settings, provider
):
    # Without EMAIL_HOST, as a server starts: password reset exists only where mail is sent
    # (tests/trust/test_password_reset.py covers it with mail).
    settings.EMAIL_BACKEND = global_settings.EMAIL_BACKEND
    settings.EMAIL_HOST = global_settings.EMAIL_HOST
    if provider:  # a provider's endpoints as an operator sets them (nothing is fetched here)
        settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
        settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
        settings.ARBITER_OIDC_CLIENT_SECRET = "secret"
        settings.ARBITER_OIDC_AUTHORIZATION_ENDPOINT = "https://id.lab.example/authorize"
        settings.ARBITER_OIDC_TOKEN_ENDPOINT = "https://id.lab.example/token"
        settings.ARBITER_OIDC_JWKS_ENDPOINT = "https://id.lab.example/jwks"
    task = queued_pairs(tmp_path, count=2)
    opened: dict[str, set[str]] = {}
    for route in _routes():
        path = _path(route, task.project.slug, task.slug)
        for method in ("GET", "POST"):
            answer = getattr(client, method.lower())(path)
            redirected_to_login = answer.status_code == 302 and "login" in answer["Location"]
            if answer.status_code not in _CLOSED or (
                answer.status_code == 302 and not redirected_to_login
            ):
                opened.setdefault(route, set()).add(method)
    beyond = {
        route: methods - ANONYMOUS.get(route, set())
        for route, methods in opened.items()
        if methods - ANONYMOUS.get(route, set())
    }
    assert beyond == {}
