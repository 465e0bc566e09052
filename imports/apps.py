from django.apps import AppConfig


class ImportsConfig(AppConfig):
    name = "imports"
    verbose_name = "Imports"

    def ready(self):
        _register_jobs()


def _register_jobs():
    from core.outbox import job_kind_register
    from imports.models import ImportJob
    from imports.tasks import import_job

    job_kind_register(
        import_job, ImportJob, lambda: ImportJob.objects.filter(status=ImportJob.Status.QUEUED)
    )
