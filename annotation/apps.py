from django.apps import AppConfig
from django.core import checks


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from annotation.checks import throwaway_secret_key

        checks.register(throwaway_secret_key, checks.Tags.security)
