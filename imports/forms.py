"""The lead's upload form. It checks the shape of the input; the services
(imports/services/import_jobs.py) hold the rules and write."""

from typing import cast

from django import forms
from django.utils.translation import gettext as _
from django.utils.translation import gettext_lazy

from content.importing.formats import FORMATS
from projects.models import Project, Task

QUEUE_CHOICES = [
    ("queue", gettext_lazy("Straight to annotation (queued)")),
    ("candidates", gettext_lazy("Candidates for the judge ensemble filter")),
]


# A format's name in the list; the others are names of datasets or file types.
FORMAT_NAMES = {"native": gettext_lazy("native")}

NEW_TASK = "+new"  # the task list's "new task" choice: never a slug, so never a task's


class ImportForm(forms.Form):
    """The file, the task it goes into and where its pairs go. The task is one of the
    project's (not archived) from a list; a new task is its own choice, with its slug typed
    in its own field, so a typo cannot make a task by accident."""

    task = forms.ChoiceField(
        label=gettext_lazy("Task"), help_text=gettext_lazy("The task the file's pairs go into.")
    )
    new_task = forms.SlugField(
        max_length=64,
        required=False,
        label=gettext_lazy("New task's slug"),
        help_text=gettext_lazy(
            "Only with “New task…”: letters, digits and dashes. t2i, edit, interleaved "
            "and reasoning get their default aspects; rename it later in the settings."
        ),
    )
    file = forms.FileField(
        label=gettext_lazy("File"),
        help_text=gettext_lazy(
            "JSONL/JSON (native, MMRB2, MJ-Bench) in a zip with its images, or Parquet "
            "with the images inside. See the sample files."
        ),
    )
    file_format = forms.ChoiceField(
        label=gettext_lazy("File format"),
        choices=[
            ("", gettext_lazy("From the file")),
            *((f, FORMAT_NAMES.get(f, f)) for f in FORMATS),
        ],
        required=False,
    )
    destination = forms.ChoiceField(
        label=gettext_lazy("Destination"),
        choices=QUEUE_CHOICES,
        initial="queue",
        widget=forms.RadioSelect,
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
        task_field.choices = [*choices, (NEW_TASK, _("New task…"))]
        task_field.initial = tasks[0].slug if tasks else NEW_TASK

    def clean(self):
        data = super().clean()
        task, new_slug = data.get("task"), data.get("new_task") or ""
        if task is None:
            return data
        if task != NEW_TASK:
            if new_slug:
                self.add_error(
                    "new_task",
                    _("Choose “New task…” above to create a task, or leave this empty."),
                )
            data["task_slug"] = task
            return data
        if not new_slug:
            self.add_error("new_task", _("Give the new task a slug, or choose a task above."))
            return data
        existing = Task.objects.filter(project=self.project, slug=new_slug).first()
        if existing is not None and existing.archived_at is not None:
            self.add_error(
                "new_task",
                _(
                    "Task %(name)s (%(slug)s) is archived: restore it in the settings "
                    "to import into it."
                )
                % {"name": existing.name, "slug": new_slug},
            )
        elif existing is not None:
            self.add_error(
                "new_task",
                _("Task %(name)s (%(slug)s) exists: choose it in the list.")
                % {"name": existing.name, "slug": new_slug},
            )
        data["task_slug"] = new_slug
        return data
