from django.apps import AppConfig


class OperationsConfig(AppConfig):
    """What an operator watches: worker heartbeats, readiness, metrics."""

    default_auto_field = "django.db.models.BigAutoField"
    name = "operations"
