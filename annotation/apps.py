from django.apps import AppConfig
from django.core import checks


class AnnotationConfig(AppConfig):
    name = "annotation"
    verbose_name = "Annotation"

    def ready(self):
        from annotation.checks import throwaway_secret_key

        checks.register(throwaway_secret_key, checks.Tags.security)
        _register_jobs()


def _register_jobs():
    from annotation.models import ImportJob
    from annotation.tasks import import_job
    from core.outbox import job_kind_register

    job_kind_register(
        import_job, ImportJob, lambda: ImportJob.objects.filter(status=ImportJob.Status.QUEUED)
    )
