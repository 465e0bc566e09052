"""The sign-in page, Django's password-reset pages as this server offers them, and the
account's API tokens.

Password reset mails a link, so it exists only where mail does (`core.mail`): without
EMAIL_HOST every reset page answers 404 and the sign-in page does not offer it (Django would
otherwise try localhost:25 on each request). Each reset request is counted per submitted
address and per client address (core/login_limits.py); over the limit it answers 429 and
sends nothing, so no one can flood a mailbox or the mail server through the form.
With local passwords turned off (ARBITER_PASSWORD_SIGN_IN=false) every reset page answers
403 saying so.

The API tokens page (/accounts/tokens/) lists the signed-in user's own tokens, makes one
(projects/services/api_tokens.py) and revokes one. A new key is shown in the answer to the
POST that made it and nowhere else: not stored, not put in the session, the page not cached.
"""

import math
from typing import Any

from django.conf import settings
from django.contrib import messages
from django.contrib.auth import user_login_failed
from django.contrib.auth import views as auth_views
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.utils import timezone
from django.utils.translation import gettext, ngettext
from django.views import View
from django.views.decorators.cache import never_cache
from django.views.decorators.http import require_http_methods, require_POST

from config.login_forms import LimitedAuthenticationForm
from core.errors import Invalid, Refused
from core.login_limits import password_reset_refusal
from core.mail import mail_configured
from projects.access import signed_in
from projects.forms import ApiTokenForm
from projects.models import Project
from projects.selectors import api_tokens_of
from projects.services.api_tokens import CreatedApiToken, api_token_create, api_token_revoke


def _passwords_off() -> str:
    return gettext("Password sign-in is turned off on this server.")


class SignInView(auth_views.LoginView):
    """The password form and, when the operator configured one, the button to the
    organisation's provider (config/oidc.py). With local passwords turned off only the
    button is shown, and a posted password is refused (403) unchecked."""

    authentication_form = LimitedAuthenticationForm

    def get_context_data(self, **kwargs: Any) -> dict[str, Any]:
        return super().get_context_data(
            password_reset=mail_configured() and settings.ARBITER_PASSWORD_SIGN_IN,
            password_sign_in=settings.ARBITER_PASSWORD_SIGN_IN,
            oidc_on=bool(settings.ARBITER_OIDC_ISSUER),
            oidc_name=settings.ARBITER_OIDC_NAME,
            **kwargs,
        )

    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        if not settings.ARBITER_PASSWORD_SIGN_IN:
            user_login_failed.send(
                sender=__name__,
                credentials={"username": str(request.POST.get("username") or "")[:150]},
                request=request,
            )
            context = self.get_context_data(refused=_passwords_off())
            return self.render_to_response(context, status=403)
        return super().post(request, *args, **kwargs)


class _MailOnly(View):
    def dispatch(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponseBase:
        if not settings.ARBITER_PASSWORD_SIGN_IN:
            raise PermissionDenied(_passwords_off())
        if not mail_configured():
            raise Http404("password reset needs mail")
        return super().dispatch(request, *args, **kwargs)


def _too_many(seconds: int) -> str:
    minutes = max(1, math.ceil(seconds / 60))
    return ngettext(
        "Too many password reset requests; try again in %(minutes)d minute.",
        "Too many password reset requests; try again in %(minutes)d minutes.",
        minutes,
    ) % {"minutes": minutes}


class PasswordResetView(_MailOnly, auth_views.PasswordResetView):
    def post(self, request: HttpRequest, *args: Any, **kwargs: Any) -> HttpResponse:
        wait = password_reset_refusal(request, str(request.POST.get("email") or ""))
        if wait is not None:
            context = self.get_context_data(refused=_too_many(wait))
            response = self.render_to_response(context, status=429)
            response["Retry-After"] = str(wait)
            return response
        return super().post(request, *args, **kwargs)


class PasswordResetDoneView(_MailOnly, auth_views.PasswordResetDoneView):
    pass


class PasswordResetConfirmView(_MailOnly, auth_views.PasswordResetConfirmView):
    pass


class PasswordResetCompleteView(_MailOnly, auth_views.PasswordResetCompleteView):
    pass


# API tokens


def _tokens_page(
    request: HttpRequest,
    form: ApiTokenForm,
    created: CreatedApiToken | None = None,
    status: int = 200,
) -> HttpResponse:
    usable, ended = api_tokens_of(request.user, timezone.now())
    context = {"form": form, "created": created, "usable": usable, "ended": ended}
    return render(request, "registration/api_tokens.html", context, status=status)


@never_cache
@login_required
@require_http_methods(["GET", "HEAD", "POST"])
def api_tokens(request: HttpRequest) -> HttpResponse:
    """List the user's tokens (GET); make one (POST), its key shown in this answer only."""
    if request.method != "POST":
        return _tokens_page(request, ApiTokenForm(request.user))
    form = ApiTokenForm(request.user, request.POST)
    if not form.is_valid():
        return _tokens_page(request, form, status=400)
    data = form.cleaned_data
    project = Project.objects.get(pk=data["project"]) if data["project"] else None
    try:
        created = api_token_create(
            user=signed_in(request.user),
            name=data["name"],
            days=data["days"],
            access=data["access"],
            project=project,
        )
    except Invalid as error:
        for field, field_messages in (error.fields or {"__all__": [error.message]}).items():
            for message in field_messages:
                form.add_error(field if field in form.fields else None, str(message))
        return _tokens_page(request, form, status=400)
    except Refused as error:
        form.add_error(None, error.message)
        return _tokens_page(request, form, status=409)
    return _tokens_page(request, ApiTokenForm(request.user), created=created)


@never_cache
@login_required
@require_POST
def api_token_revoke_view(request: HttpRequest, token_id: int) -> HttpResponse:
    """Revoke one of the user's own tokens (anyone else's: 404, like a missing one)."""
    token = api_token_revoke(user=signed_in(request.user), token_id=token_id)
    messages.success(
        request, gettext("Token “%(name)s” revoked: it no longer works.") % {"name": token.name}
    )
    return redirect("api-tokens")
