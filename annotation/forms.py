"""The lead's forms for projects, tasks and imports. They check the shape of the input; the
services (annotation/services/projects.py, import_jobs.py) hold the rules and write."""

from typing import cast

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


NEW_TASK = "+new"  # the task list's "new task" choice: never a slug, so never a task's


class ImportForm(forms.Form):
    """The file, the task it goes into and where its pairs go. The task is one of the
    project's (not archived) from a list; a new task is its own choice, with its slug typed
    in its own field, so a typo cannot make a task by accident."""

    task = forms.ChoiceField(help_text="The task the file's pairs go into.")
    new_task = forms.SlugField(
        max_length=64,
        required=False,
        label="New task's slug",
        help_text="Only with “New task…”: letters, digits and dashes. t2i, edit, interleaved "
        "and reasoning get their default aspects; rename it later in the settings.",
    )
    file = forms.FileField(
        help_text="JSONL/JSON (native, MMRB2, MJ-Bench) in a zip with its images, or Parquet "
        "with the images inside. See the sample files."
    )
    file_format = forms.ChoiceField(
        choices=[("", "From the file"), *((f, f) for f in FORMATS)], required=False
    )
    destination = forms.ChoiceField(
        choices=QUEUE_CHOICES, initial="queue", widget=forms.RadioSelect
    )

    def __init__(self, project: Project, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.project = project
        tasks = list(Task.objects.active().filter(project=project).order_by("slug"))
        choices = [
            (task.slug, task.slug if task.name == task.slug else f"{task.name} ({task.slug})")
            for task in tasks
        ]
        task_field = cast(forms.ChoiceField, self.fields["task"])
        task_field.choices = [*choices, (NEW_TASK, "New task…")]
        task_field.initial = tasks[0].slug if tasks else NEW_TASK

    def clean(self):
        data = super().clean()
        task, new_slug = data.get("task"), data.get("new_task") or ""
        if task is None:
            return data
        if task != NEW_TASK:
            if new_slug:
                self.add_error(
                    "new_task", "Choose “New task…” above to create a task, or leave this empty."
                )
            data["task_slug"] = task
            return data
        if not new_slug:
            self.add_error("new_task", "Give the new task a slug, or choose a task above.")
            return data
        existing = Task.objects.filter(project=self.project, slug=new_slug).first()
        if existing is not None and existing.archived_at is not None:
            self.add_error(
                "new_task",
                f"Task {existing.name} ({new_slug}) is archived: restore it in the settings "
                "to import into it.",
            )
        elif existing is not None:
            self.add_error(
                "new_task", f"Task {existing.name} ({new_slug}) exists: choose it in the list."
            )
        data["task_slug"] = new_slug
        return data
