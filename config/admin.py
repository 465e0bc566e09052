"""The Django admin belongs to the operator: only active superusers may enter it.

Leads and annotators work in Arbiter's own pages, whose queries are scoped by project; the
admin's forms are not (its foreign-key fields list and accept rows of every project), so
nobody but the operator gets in at all.
"""

from django.contrib.admin import AdminSite
from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.http import HttpRequest

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

    def has_permission(self, request: HttpRequest) -> bool:
        user = request.user
        return user.is_active and user.is_superuser
