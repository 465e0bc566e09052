"""Forms of the lead's judging pages; the services validate again and do the writing."""

from django import forms

from annotation.models import Task
from judging.models import (
    MAX_CONCURRENCY,
    MAX_REQUESTS_PER_MINUTE,
    MAX_SAMPLES,
    MAX_TIMEOUT_SECONDS,
    Judge,
    PromptTemplate,
)
from judging.selectors import callable_judges, connections_for


class JudgeForm(forms.Form):
    """A project's judge. The connection (where calls go, which key) is the operator's: a
    lead picks one allowed for the project and never types a URL or a variable name."""

    name = forms.CharField(max_length=100)
    backend = forms.ChoiceField(
        choices=[c for c in Judge.Backend.choices if c[0] != Judge.Backend.EXTERNAL]
    )
    connection = forms.ModelChoiceField(
        queryset=None,
        required=False,
        to_field_name="name",
        help_text="Set up by the operator; needed by OpenAI- and Anthropic-style judges.",
    )
    model = forms.CharField(max_length=200, required=False)
    concurrency = forms.IntegerField(min_value=1, max_value=MAX_CONCURRENCY, initial=4)
    requests_per_minute = forms.IntegerField(
        min_value=1, max_value=MAX_REQUESTS_PER_MINUTE, initial=60
    )
    timeout_seconds = forms.FloatField(min_value=0.1, max_value=MAX_TIMEOUT_SECONDS, initial=60)
    sampling = forms.JSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='JSON, e.g. {"temperature": 0, "max_tokens": 1024, "seed": 1}',
    )
    templates = forms.JSONField(
        required=False,
        initial=dict,
        widget=forms.Textarea(attrs={"rows": 2}),
        help_text='JSON {task kind: template name}, e.g. {"t2i": "mjbench-t2i"}',
    )
    price_input_per_mtok = forms.DecimalField(
        max_digits=10, decimal_places=4, min_value=0, initial=0, label="Price input / 1M tokens"
    )
    price_output_per_mtok = forms.DecimalField(
        max_digits=10, decimal_places=4, min_value=0, initial=0, label="Price output / 1M tokens"
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
        self.fields["connection"].queryset = connections_for(project)
        if judge is not None:
            self.fields["name"].disabled = True  # names identify judges in reports

    def changes(self) -> dict:
        return {
            field: self.cleaned_data[field] for field in ("backend", "connection", *_JUDGE_FIELDS)
        }


_JUDGE_FIELDS = (
    "model", "concurrency", "requests_per_minute", "timeout_seconds", "sampling", "templates",
    "price_input_per_mtok", "price_output_per_mtok",
)  # fmt: skip


class TemplateForm(forms.Form):
    """A new version of a project's template (or a project copy of a built-in)."""

    name = forms.SlugField(max_length=64)
    answer_format = forms.ChoiceField(choices=PromptTemplate.AnswerFormat.choices)
    body = forms.CharField(
        widget=forms.Textarea(attrs={"rows": 18}),
        max_length=100_000,
        help_text="Must contain {prompt}, {first} and {second} once each.",
    )


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.none())
    task = forms.ModelChoiceField(
        queryset=Task.objects.none(), required=False, empty_label="All tasks"
    )
    samples = forms.IntegerField(min_value=1, max_value=MAX_SAMPLES, initial=1)

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judge"].queryset = callable_judges(project)
        self.fields["task"].queryset = Task.objects.filter(project=project)


class EnsembleForm(forms.Form):
    judges = forms.ModelMultipleChoiceField(
        queryset=Judge.objects.none(), widget=forms.CheckboxSelectMultiple
    )
    threshold = forms.FloatField(
        min_value=0.51, max_value=1.0, required=False, help_text="Empty: the project's setting."
    )

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["judges"].queryset = callable_judges(project)
