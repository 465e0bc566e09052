from django import forms
from django.contrib import admin
from django.db import models

from annotation.admin import LeadScopedAdmin
from judging.models import Judge, JudgeRun, JudgeRunChunk, PromptTemplate, TaskEnsemble, Verdict
from judging.prompts import TemplateInvalid, template_check, template_save


@admin.register(Judge)
class JudgeAdmin(admin.ModelAdmin):
    formfield_overrides = {models.URLField: {"assume_scheme": "https"}}
    list_display = ["name", "backend", "model", "concurrency", "requests_per_minute"]
    search_fields = ["name"]


class JudgeRunChunkInline(admin.TabularInline):
    model = JudgeRunChunk
    fields = ["index", "done", "attempts", "answered", "ties", "invalid", "failed", "finished_at"]
    readonly_fields = fields
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(JudgeRun)
class JudgeRunAdmin(LeadScopedAdmin):
    list_display = ["id", "judge", "project", "task", "purpose", "status", "trials", "created_at"]
    list_filter = ["status", "purpose", "judge"]
    inlines = [JudgeRunChunkInline]


@admin.register(Verdict)
class VerdictAdmin(LeadScopedAdmin):
    project_path = "pair__project"
    list_display = ["pair", "judge", "order", "sample", "choice", "error"]
    list_filter = ["judge", "order", "choice"]
    raw_id_fields = ["pair", "run"]


class PromptTemplateForm(forms.ModelForm):
    class Meta:
        model = PromptTemplate
        fields = ["name", "answer_format", "body"]

    def clean(self):
        cleaned = super().clean()
        try:
            template_check(cleaned.get("body", ""), cleaned.get("answer_format", ""))
        except TemplateInvalid as error:
            raise forms.ValidationError(str(error)) from None
        return cleaned


@admin.register(PromptTemplate)
class PromptTemplateAdmin(admin.ModelAdmin):
    """Templates are versioned: adding one with an existing name makes its next version;
    a saved version never changes (verdicts point at it)."""

    form = PromptTemplateForm
    list_display = ["name", "version", "answer_format", "created_at"]
    list_filter = ["answer_format"]
    search_fields = ["name"]

    def get_readonly_fields(self, request, obj=None):
        return ["name", "version", "answer_format", "body"] if obj else ["version"]

    def save_model(self, request, obj, form, change):
        if not change:
            saved = template_save(obj.name, obj.body, obj.answer_format)
            obj.pk, obj.version = saved.pk, saved.version


@admin.register(TaskEnsemble)
class TaskEnsembleAdmin(LeadScopedAdmin):
    project_path = "task__project"
    list_display = ["task", "threshold"]
    filter_horizontal = ["judges"]
