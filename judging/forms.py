"""Forms of the lead's judging pages; the services validate again and do the writing."""

from django import forms
from django.forms.fields import InvalidJSONInput
from django.utils.functional import lazy
from django.utils.html import format_html
from django.utils.safestring import SafeString
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from content.importing.errors import ImportFailed, require_storable_text
from content.importing.upload_limits import json_too_deep
from core.whole_numbers import whole_number
from judging.models import (
    MAX_CONCURRENCY,
    MAX_REQUESTS_PER_MINUTE,
    MAX_SAMPLES,
    MAX_TIMEOUT_SECONDS,
    Connection,
    Judge,
    JudgeRun,
    PromptTemplate,
)
from judging.selectors import callable_judges, connections_for
from projects.models import Project, Task


def _sampling_help() -> SafeString:
    """The sampling field's help: a sentence in the page's language and an example shown as
    code (format_html escapes both)."""
    example = '{"temperature": 0, "max_tokens": 1024, "seed": 1}'
    return format_html("{} <code>{}</code>", _("JSON, e.g."), example)


class SettingsJSONField(forms.JSONField):
    """A small JSON object typed into a form: refused, never a crash, when it nests too deep,
    holds a number Python will not parse, or text no database stores (a NUL character, a lone
    surrogate)."""

    widget = forms.Textarea(attrs={"rows": 2})

    def to_python(self, value):
        if isinstance(value, str) and json_too_deep(value, limit=8):
            raise forms.ValidationError(_("Nested too deep for a settings object."))
        try:
            parsed = super().to_python(value)
        except (ValueError, RecursionError):  # e.g. an integer of 5,000 digits
            raise forms.ValidationError(_("Enter a valid JSON object.")) from None
        try:
            require_storable_text(parsed, None, "the value")
        except ImportFailed as failed:
            raise forms.ValidationError(failed.detail) from None
        return parsed

    def bound_data(self, data, initial):
        if isinstance(data, str) and json_too_deep(data, limit=8):
            return InvalidJSONInput(data)  # shown again as typed, never parsed
        try:
            parsed = super().bound_data(data, initial)
            require_storable_text(parsed, None)  # it is rendered again as UTF-8
        except (ValueError, RecursionError, ImportFailed):
            return InvalidJSONInput(data)
        return parsed


def _an_id(value) -> bool:
    return whole_number(value) is not None


class IdChoiceField(forms.ModelChoiceField):
    """A choice by id; an id no database could hold is an invalid choice, not a crash."""

    def to_python(self, value):
        if value not in self.empty_values and not _an_id(value):
            raise forms.ValidationError(
                self.error_messages["invalid_choice"], code="invalid_choice"
            )
        return super().to_python(value)


class TaskChoiceField(IdChoiceField):
    """A project's task, offered by the name its lead gave it (its slug is for URLs)."""

    def label_from_instance(self, obj) -> str:
        return obj.name


class IdMultipleChoiceField(forms.ModelMultipleChoiceField):
    def clean(self, value):
        for item in value or []:
            if not _an_id(item):
                raise forms.ValidationError(
                    self.error_messages["invalid_choice"],
                    code="invalid_choice",
                    params={"value": "?"},
                )
        return super().clean(value)


# The settings a judge's page edits besides its name, backend and connection.
_JUDGE_FIELDS = (
    "model", "concurrency", "requests_per_minute", "timeout_seconds", "sampling", "templates",
    "price_input_per_mtok", "price_output_per_mtok",
)  # fmt: skip


class JudgeForm(forms.Form):
    """A project's judge. The connection (where calls go, which key) is the operator's: a
    lead picks one allowed for the project and never types a URL or a variable name."""

    name = forms.CharField(label=gettext_lazy("Name"), max_length=100)
    backend = forms.ChoiceField(
        label=gettext_lazy("Backend"),
        choices=[c for c in Judge.Backend.choices if c[0] != Judge.Backend.EXTERNAL],
    )
    connection = forms.ModelChoiceField(
        queryset=Connection.objects.none(),  # the project's, set in __init__
        required=False,
        to_field_name="name",
        label=gettext_lazy("Connection"),
        help_text=gettext_lazy(
            "Set up by the operator; needed by OpenAI- and Anthropic-style judges."
        ),
    )
    model = forms.CharField(label=gettext_lazy("Model"), max_length=200, required=False)
    concurrency = forms.IntegerField(
        label=gettext_lazy("Concurrency"), min_value=1, max_value=MAX_CONCURRENCY, initial=4
    )
    requests_per_minute = forms.IntegerField(
        min_value=1,
        max_value=MAX_REQUESTS_PER_MINUTE,
        required=False,
        label=gettext_lazy("Requests per minute (cap)"),
        help_text=gettext_lazy(
            "Empty: no cap; calls adapt to what the API takes (429s shrink them)."
        ),
    )
    timeout_seconds = forms.FloatField(
        label=gettext_lazy("Timeout seconds"),
        min_value=0.1,
        max_value=MAX_TIMEOUT_SECONDS,
        initial=60,
    )
    sampling = SettingsJSONField(
        label=gettext_lazy("Sampling"),
        required=False,
        initial=dict,
        help_text=lazy(_sampling_help, SafeString)(),  # built when shown: its language
    )
    templates = SettingsJSONField(
        label=gettext_lazy("Templates"),
        required=False,
        initial=dict,
        help_text=gettext_lazy('JSON {task kind: template name}, e.g. {"t2i": "mjbench-t2i"}'),
    )
    price_input_per_mtok = forms.DecimalField(
        max_digits=10,
        decimal_places=4,
        min_value=0,
        initial=0,
        label=gettext_lazy("Price input / 1M tokens"),
    )
    price_output_per_mtok = forms.DecimalField(
        max_digits=10,
        decimal_places=4,
        min_value=0,
        initial=0,
        label=gettext_lazy("Price output / 1M tokens"),
    )

    def __init__(self, project, *args, judge: Judge | None = None, **kwargs):
        if judge is not None and "initial" not in kwargs:
            kwargs["initial"] = {
                "name": judge.name,
                "backend": judge.backend,
                "connection": judge.connection.name if judge.connection else None,
                **{field: getattr(judge, field) for field in _JUDGE_FIELDS},
            }
        super().__init__(*args, **kwargs)
        connection = self.fields["connection"]
        assert isinstance(connection, forms.ModelChoiceField)  # declared above
        connection.queryset = connections_for(project)
        if judge is not None:
            self.fields["name"].disabled = True  # names identify judges in reports

    def changes(self) -> dict:
        return {
            field: self.cleaned_data[field] for field in ("backend", "connection", *_JUDGE_FIELDS)
        }


class TemplateForm(forms.Form):
    """A new version of a project's template (or a project copy of a built-in)."""

    name = forms.SlugField(label=gettext_lazy("Name"), max_length=64)
    answer_format = forms.ChoiceField(
        label=gettext_lazy("Answer format"), choices=PromptTemplate.AnswerFormat.choices
    )
    body = forms.CharField(
        label=gettext_lazy("Body"),
        widget=forms.Textarea(attrs={"rows": 18}),
        max_length=100_000,
        help_text=gettext_lazy("Must contain {prompt}, {first} and {second} once each."),
    )


class RunStartForm(forms.Form):
    judge = IdChoiceField(label=gettext_lazy("Judge"), queryset=Judge.objects.none())
    task = TaskChoiceField(
        label=gettext_lazy("Task"),
        queryset=Task.objects.none(),
        required=False,
        empty_label=gettext_lazy("All tasks"),
    )
    samples = forms.IntegerField(
        label=gettext_lazy("Samples"), min_value=1, max_value=MAX_SAMPLES, initial=1
    )
    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"),
        choices=[
            (JudgeRun.Mode.LIVE, gettext_lazy("Live calls (answers now)")),
            (
                JudgeRun.Mode.BATCH,
                gettext_lazy("Provider batch (about half the price, answers within 24 h)"),
            ),
        ],
        initial=JudgeRun.Mode.LIVE,
        required=False,
        widget=forms.RadioSelect,
    )

    def clean_mode(self) -> str:
        return self.cleaned_data["mode"] or JudgeRun.Mode.LIVE  # live unless asked

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = callable_judges(project)
        self.fields["task"].queryset = Task.objects.filter(project=project).order_by("name", "pk")


class EnsembleForm(forms.Form):
    judges = IdMultipleChoiceField(
        label=gettext_lazy("Judges"),
        queryset=Judge.objects.none(),
        widget=forms.CheckboxSelectMultiple,
    )
    threshold = forms.FloatField(
        label=gettext_lazy("Threshold"),
        min_value=0.51,
        max_value=1.0,
        required=False,
        help_text=gettext_lazy("Empty: the project's setting."),
    )

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judges"].queryset = callable_judges(project)


class SamplingForm(forms.Form):
    """Which pairs the experts rate: every pair, or a sample chosen for information."""

    mode = forms.ChoiceField(
        label=gettext_lazy("Mode"), choices=Project.RatingMode.choices, widget=forms.RadioSelect
    )
    budget = forms.IntegerField(
        min_value=1,
        max_value=10_000_000,
        required=False,
        label=gettext_lazy("Pairs to rate per task"),
        help_text=gettext_lazy(
            "In a sample: no more pairs per task are started (empty: no limit)."
        ),
    )
