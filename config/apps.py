from django.contrib.admin.apps import AdminConfig


class OperatorAdminConfig(AdminConfig):
    """The Django admin with config/admin.py's site: superusers (operators) only."""

    default_site = "config.admin.OperatorAdminSite"
