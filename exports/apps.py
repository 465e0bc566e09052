from django.apps import AppConfig


class ExportsConfig(AppConfig):
    name = "exports"
    default_auto_field = "django.db.models.BigAutoField"

    def ready(self) -> None:
        from core.outbox import job_kind_register
        from exports.models import ExportJob
        from exports.tasks import export_job

        job_kind_register(
            export_job, ExportJob, lambda: ExportJob.objects.filter(status=ExportJob.Status.QUEUED)
        )
