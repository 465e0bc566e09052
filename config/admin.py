"""The Django admin belongs to the operator: only active superusers may enter it.

Leads and annotators work in Arbiter's own pages, whose queries are scoped by project; the
admin's forms are not (its foreign-key fields list and accept rows of every project), so
nobody but the operator gets in at all.
"""

from django.contrib.admin import AdminSite
from django.contrib.admin.apps import AdminConfig


class OperatorAdminSite(AdminSite):
    site_header = "Arbiter administration (operators)"

    def has_permission(self, request):
        user = request.user
        return user.is_active and user.is_superuser


class OperatorAdminConfig(AdminConfig):
    default_site = "config.admin.OperatorAdminSite"
