"""The lead's forms for projects, tasks and imports. They check the shape of the input; the
services (annotation/services/projects.py, import_jobs.py) hold the rules and write."""

from django import forms

from annotation.services.projects import PROJECT_FIELDS, QUALITY_SETTINGS, aspects_text
from content.importing.formats import FORMATS
from projects.models import Project, Task


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["slug", *PROJECT_FIELDS]
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 6})}
        help_texts = {
            "slug": "Letters, digits and dashes; in every URL and file of the project.",
            "ensemble_threshold": "Share of ensemble judges that must agree for a pair to "
            "be removed as easy (0–1).",
            "lease_minutes": "How long a pair stays with an annotator who opened it.",
            "edit_grace_minutes": "How long after submitting an annotator may still correct "
            "a rating, even once the pair is complete (0: never after completion).",
        }

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if editing:
            del self.fields["slug"]  # URLs, exports and files name it

    def values(self) -> dict:
        return {name: self.cleaned_data[name] for name in PROJECT_FIELDS}

    def validate_unique(self):
        """The service checks uniqueness and the model's rules, answering with field errors."""


class TaskForm(forms.Form):
    slug = forms.SlugField(max_length=64, help_text="Names the task in files and exports.")
    name = forms.CharField(max_length=200)
    kind = forms.ChoiceField(choices=Task.Kind.choices)
    aspects = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text="Rated beside the overall score, one per line: key | Label | help.",
    )
    guidelines = forms.CharField(
        required=False,
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text="Markdown, shown to annotators with the project's guidelines.",
    )

    # Quality control (issue 15). Left empty, a setting keeps its current value.
    gold_rate = forms.FloatField(
        required=False,
        min_value=0,
        max_value=0.5,
        help_text="Share of each annotator's pairs that are gold checks (0.1: one in ten).",
    )
    gold_min_accuracy = forms.FloatField(
        required=False,
        min_value=0,
        max_value=1,
        help_text="Gold accuracy below this, after the minimum answers, triggers the action.",
    )
    gold_min_answers = forms.IntegerField(
        required=False,
        min_value=1,
        max_value=1000,
        help_text="Gold answers before an annotator is judged on them.",
    )
    gold_action = forms.ChoiceField(choices=Task.GoldAction.choices, required=False)
    min_active_seconds = forms.FloatField(
        required=False, min_value=0, max_value=3600, label="Speed floor (s)",
        help_text="Ratings with less active time than this count as too fast.",
    )  # fmt: skip

    qualification_required = forms.BooleanField(
        required=False,
        help_text="Annotators answer the qualification set (gold pairs marked for it) first.",
    )
    qualification_pass = forms.FloatField(
        required=False, min_value=0, max_value=1,
        help_text="Share of the qualification set to get right to be admitted (0.8).",
    )  # fmt: skip

    QUALITY_FIELDS = QUALITY_SETTINGS

    @classmethod
    def for_task(cls, task: Task, data=None) -> "TaskForm":
        initial = {
            "slug": task.slug,
            "name": task.name,
            "kind": task.kind,
            "aspects": aspects_text(task.aspects),
            "guidelines": task.guidelines,
            **{name: getattr(task, name) for name in cls.QUALITY_FIELDS},
        }
        return cls(data, initial=initial)

    def quality_settings(self) -> dict:
        """The quality-control settings the lead filled in (empty ones keep their value)."""
        return {
            name: self.cleaned_data[name]
            for name in self.QUALITY_FIELDS
            if self.cleaned_data.get(name) not in (None, "")
        }


QUEUE_CHOICES = [
    ("queue", "Straight to annotation (queued)"),
    ("candidates", "Candidates for the judge ensemble filter"),
]


class ImportForm(forms.Form):
    task = forms.SlugField(
        max_length=64,
        help_text="An existing task's slug, or a new one (t2i, edit, interleaved, reasoning "
        "get their default aspects).",
    )
    file = forms.FileField(
        help_text="JSONL/JSON (native, MMRB2, MJ-Bench), Parquet, or a zip with the images."
    )
    file_format = forms.ChoiceField(
        choices=[("", "From the file"), *((f, f) for f in FORMATS)], required=False
    )
    destination = forms.ChoiceField(
        choices=QUEUE_CHOICES, initial="queue", widget=forms.RadioSelect
    )
