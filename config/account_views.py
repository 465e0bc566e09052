"""The sign-in page and Django's password-reset pages, as this server offers them.

Password reset mails a link, so it exists only where mail does (`core.mail`): without
EMAIL_HOST every reset page answers 404 and the sign-in page does not offer it (Django would
otherwise try localhost:25 on each request). Each reset request is counted per submitted
address and per client address (core/login_limits.py); over the limit it answers 429 and
sends nothing, so no one can flood a mailbox or the mail server through the form.
With local passwords turned off (ARBITER_PASSWORD_SIGN_IN=false) every reset page answers
403 saying so.
"""

import math
from typing import Any

from django.conf import settings
from django.contrib.auth import user_login_failed
from django.contrib.auth import views as auth_views
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest, HttpResponse
from django.http.response import HttpResponseBase
from django.utils.translation import gettext, ngettext
from django.views import View

from config.login_forms import LimitedAuthenticationForm
from core.login_limits import password_reset_refusal
from core.mail import mail_configured


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
