"""Forms of the lead's judging pages; the services do the writing."""

from django import forms

from annotation.models import Task
from judging.models import Judge


class JudgeForm(forms.ModelForm):
    base_url = forms.URLField(
        required=False, assume_scheme="https", help_text="e.g. http://127.0.0.1:8000/v1"
    )

    class Meta:
        model = Judge
        fields = [
            "name", "backend", "model", "base_url", "api_key_env", "concurrency",
            "requests_per_minute", "timeout_seconds", "sampling", "templates",
            "price_input_per_mtok", "price_output_per_mtok",
        ]  # fmt: skip
        help_texts = {
            "api_key_env": "The NAME of the environment variable holding the key, never the key.",
            "sampling": 'JSON, e.g. {"temperature": 0, "max_tokens": 1024, "seed": 1}',
            "templates": 'JSON {task kind: template name}, e.g. {"t2i": "mjbench-t2i"}',
        }

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["backend"].choices = [
            choice for choice in Judge.Backend.choices if choice[0] != Judge.Backend.EXTERNAL
        ]

    def clean_api_key_env(self):
        value = self.cleaned_data["api_key_env"].strip()
        if value and not value.replace("_", "").isalnum():
            raise forms.ValidationError("Letters, digits and _ only: a variable name, not a key.")
        return value

    def clean_sampling(self):
        return _json_object(self.cleaned_data["sampling"])

    def clean_templates(self):
        return _json_object(self.cleaned_data["templates"])


def _json_object(value):
    if value in (None, ""):
        return {}
    if not isinstance(value, dict):
        raise forms.ValidationError("Expected a JSON object.")
    return value


class RunStartForm(forms.Form):
    judge = forms.ModelChoiceField(queryset=Judge.objects.exclude(backend=Judge.Backend.EXTERNAL))
    task = forms.ModelChoiceField(
        queryset=Task.objects.none(), required=False, empty_label="All tasks"
    )
    samples = forms.IntegerField(min_value=1, max_value=50, initial=1)

    def __init__(self, project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.fields["task"].queryset = Task.objects.filter(project=project)


class EnsembleForm(forms.Form):
    judges = forms.ModelMultipleChoiceField(
        queryset=Judge.objects.exclude(backend=Judge.Backend.EXTERNAL),
        widget=forms.CheckboxSelectMultiple,
    )
    threshold = forms.FloatField(
        min_value=0.51, max_value=1.0, required=False, help_text="Empty: the project's setting."
    )
