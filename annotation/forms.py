"""The lead's forms for projects, tasks and imports. They check the shape of the input; the
services (annotation/services/projects.py, import_jobs.py) hold the rules and write."""

from django import forms

from annotation.importing.formats import FORMATS
from annotation.models import Project, Task
from annotation.services.projects import PROJECT_FIELDS, aspects_text


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

    @classmethod
    def for_task(cls, task: Task, data=None) -> "TaskForm":
        initial = {
            "slug": task.slug,
            "name": task.name,
            "kind": task.kind,
            "aspects": aspects_text(task.aspects),
            "guidelines": task.guidelines,
        }
        return cls(data, initial=initial)


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
