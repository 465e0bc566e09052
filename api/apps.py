from django.apps import AppConfig


class ApiConfig(AppConfig):
    name = "api"
    verbose_name = "REST API"

    def ready(self):
        from api import signals  # noqa: F401  (connects the token rotation)
