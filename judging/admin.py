from django.contrib import admin

from annotation.admin import LeadScopedAdmin
from judging.models import Judge, JudgeRun, Verdict


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    list_display = ["name", "backend", "model", "concurrency", "requests_per_minute"]
    search_fields = ["name"]


@admin.register(JudgeRun)
class JudgeRunAdmin(LeadScopedAdmin):
    list_display = ["id", "judge", "project", "task", "status", "created_at"]
    list_filter = ["status", "judge"]


@admin.register(Verdict)
class VerdictAdmin(LeadScopedAdmin):
    project_path = "pair__project"
    list_display = ["pair", "judge", "order", "sample", "choice", "error"]
    list_filter = ["judge", "order", "choice"]
    raw_id_fields = ["pair", "run"]
