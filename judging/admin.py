"""The operator's admin of judging: connections (where calls go, which key), every judge,
runs, verdicts and templates. Leads never reach it (config/admin.py)."""

from django import forms
from django.contrib import admin

from annotation.admin import OperatorAdmin, RecordAdmin
from core.errors import Invalid
from judging.models import (
    Connection,
    Judge,
    JudgeRun,
    JudgeRunChunk,
    PromptTemplate,
    TaskEnsemble,
    Verdict,
)
from judging.prompts import TemplateInvalid, template_check, template_save
from judging.services.judges import api_key_env_check, base_url_check


class ConnectionForm(forms.ModelForm):
    base_url = forms.URLField(max_length=500, assume_scheme="https")

    class Meta:
        model = Connection
        fields = ["name", "backend", "base_url", "api_key_env", "all_projects", "projects"]
        help_texts = {
            "api_key_env": "The NAME of the server's environment variable holding the key.",
            "all_projects": "Or choose the projects below.",
        }

    def clean_base_url(self):
        return _field(base_url_check, self.cleaned_data["base_url"])

    def clean_api_key_env(self):
        return _field(api_key_env_check, self.cleaned_data["api_key_env"].strip())


def _field(check, value):
    try:
        return check(value)
    except Invalid as invalid:  # a form field's check: Django's form error, one message
        raise forms.ValidationError(invalid.message) from None


@admin.register(Connection)
class ConnectionAdmin(OperatorAdmin):
    form = ConnectionForm
    list_display = ["name", "backend", "base_url", "api_key_env", "all_projects"]
    filter_horizontal = ["projects"]


@admin.register(Judge)
class JudgeAdmin(OperatorAdmin):
    list_display = ["name", "project", "backend", "connection", "model", "concurrency"]
    list_filter = ["backend", "project"]
    search_fields = ["name"]


_CHUNK_FIELDS = (
    "index",
    "done",
    "attempts",
    "answered",
    "ties",
    "invalid",
    "failed",
    "finished_at",
)


class JudgeRunChunkInline(admin.TabularInline):
    model = JudgeRunChunk
    fields = _CHUNK_FIELDS
    readonly_fields = _CHUNK_FIELDS
    extra = 0
    can_delete = False
    show_change_link = False


@admin.register(JudgeRun)
class JudgeRunAdmin(RecordAdmin):
    list_display = ["id", "judge", "project", "task", "purpose", "status", "trials", "created_at"]
    list_filter = ["status", "purpose", "judge"]
    inlines = [JudgeRunChunkInline]


@admin.register(Verdict)
class VerdictAdmin(RecordAdmin):
    list_display = ["pair", "judge", "order", "sample", "choice", "error"]
    list_filter = ["judge", "order", "choice"]
    raw_id_fields = ["pair", "run"]


class PromptTemplateForm(forms.ModelForm):
    class Meta:
        model = PromptTemplate
        fields = ["project", "name", "answer_format", "body"]

    def clean(self):
        cleaned = super().clean()
        if cleaned.get("project") is None:
            raise forms.ValidationError("built-in templates live in the code; choose a project")
        try:
            template_check(cleaned.get("body", ""), cleaned.get("answer_format", ""))
        except TemplateInvalid as error:
            raise forms.ValidationError(str(error)) from None
        return cleaned


@admin.register(PromptTemplate)
class PromptTemplateAdmin(OperatorAdmin):
    """Templates are versioned: adding one with an existing name makes its next version in
    that project; a saved version never changes (verdicts point at it)."""

    form = PromptTemplateForm
    list_display = ["name", "project", "version", "answer_format", "created_at"]
    list_filter = ["answer_format", "project"]
    search_fields = ["name"]

    def get_readonly_fields(self, request, obj=None):
        return ["project", "name", "version", "answer_format", "body"] if obj else ["version"]

    def save_model(self, request, obj, form, change):
        if not change:
            saved = template_save(obj.name, obj.body, obj.answer_format, obj.project)
            obj.pk, obj.version = saved.pk, saved.version


@admin.register(TaskEnsemble)
class TaskEnsembleAdmin(OperatorAdmin):
    list_display = ["task", "threshold"]
    filter_horizontal = ["judges"]
