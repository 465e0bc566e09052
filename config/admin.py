"""The Django admin belongs to the operator: only active superusers may enter it.

Leads and annotators work in Arbiter's own pages, whose queries are scoped by project; the
admin's forms are not (its foreign-key fields list and accept rows of every project), so
nobody but the operator gets in at all.
"""

from django.conf import settings
from django.contrib.admin import AdminSite
from django.contrib.auth import REDIRECT_FIELD_NAME
from django.contrib.auth.models import User
from django.contrib.auth.views import redirect_to_login
from django.core.exceptions import ValidationError
from django.http import HttpRequest, HttpResponse
from django.shortcuts import resolve_url
from django.urls import reverse

from config.login_forms import LimitedAdminAuthenticationForm


class OperatorLoginForm(LimitedAdminAuthenticationForm):
    """The admin's sign-in (rate-limited like every login form) admits superusers only, with
    the same words as a wrong password."""

    def confirm_login_allowed(self, user: User) -> None:
        super().confirm_login_allowed(user)
        if not user.is_superuser:
            raise ValidationError(
                self.error_messages["invalid_login"],
                code="invalid_login",
                params={"username": self.username_field.verbose_name},
            )


class OperatorAdminSite(AdminSite):
    site_header = "Arbiter administration (operators)"
    login_form = OperatorLoginForm

    def login(self, request: HttpRequest, extra_context=None) -> HttpResponse:  # type: ignore[no-untyped-def]
        # With local passwords off the admin's password form would refuse everyone: the
        # site's sign-in page (the provider's button) signs the operator in instead.
        if not settings.ARBITER_PASSWORD_SIGN_IN:
            return redirect_to_login(
                request.GET.get(REDIRECT_FIELD_NAME) or reverse("admin:index"),
                resolve_url(settings.LOGIN_URL),
            )
        return super().login(request, extra_context)

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return user.is_active and user.is_superuser
