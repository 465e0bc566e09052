from django.apps import AppConfig


class JudgingConfig(AppConfig):
    name = "judging"
    verbose_name = "AI judges"

    def ready(self):
        from core.outbox import job_kind_register
        from judging.models import JudgeRun, JudgeRunChunk
        from judging.tasks import judge_chunk

        open_runs = [JudgeRun.Status.PENDING, JudgeRun.Status.RUNNING]
        job_kind_register(
            judge_chunk,
            JudgeRunChunk,
            lambda: JudgeRunChunk.objects.filter(done=False, run__status__in=open_runs),
        )
