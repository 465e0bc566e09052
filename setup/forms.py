"""The lead's forms for projects and tasks. They check the shape of the input; the services
(setup/services.py) hold the rules and write."""

from typing import TYPE_CHECKING

from django import forms
from django.utils.translation import gettext_lazy

from projects.models import Project, Task
from setup.services import PROJECT_FIELDS, QUALITY_SETTINGS, aspects_text

if TYPE_CHECKING:  # the stubs' type of a lazy translation: not at run time
    from django_stubs_ext import StrOrPromise


class ProjectForm(forms.ModelForm):
    class Meta:
        model = Project
        fields = ["slug", *PROJECT_FIELDS]
        widgets = {"guidelines": forms.Textarea(attrs={"rows": 6})}
        # The model's field names and help texts, marked for translation (the model keeps
        # its own English texts: no migration for a label).
        labels = {
            "slug": gettext_lazy("Slug"),
            "name": gettext_lazy("Name"),
            "scale_points": gettext_lazy("Likert points (K)"),
            "scale_from_first_file": gettext_lazy("Take K from the first file imported"),
            "annotators_per_pair": gettext_lazy("Annotators per pair (N)"),
            "max_span": gettext_lazy("Max span"),
            "ambiguous_half_width": gettext_lazy("Ambiguous half width"),
            "ensemble_threshold": gettext_lazy("Ensemble threshold"),
            "lease_minutes": gettext_lazy("Lease minutes"),
            "edit_grace_minutes": gettext_lazy("Edit grace minutes"),
            "guidelines": gettext_lazy("Guidelines"),
            "target_half_width": gettext_lazy("Target interval (±)"),
            "judge_labels": gettext_lazy("Export judge labels with a guarantee"),
            "judge_labels_alpha": gettext_lazy("Disagreement allowed (α)"),
            "judge_labels_delta": gettext_lazy("Risk that the guarantee fails (δ)"),
        }
        help_texts = {
            "slug": gettext_lazy(
                "Letters, digits and dashes; in every URL and file of the project."
            ),
            "scale_points": gettext_lazy("Scores run 1..K; above the centre means A is better."),
            "scale_from_first_file": gettext_lazy(
                "While the project has no pairs, the first file uploaded with scores on another "
                "scale sets K (MMRB2's files: 6) instead of being refused."
            ),
            "max_span": gettext_lazy(
                "A complete pair whose max − min score exceeds this is dropped."
            ),
            "ambiguous_half_width": gettext_lazy(
                "Pairs whose mean lies within centre ± this are dropped as ambiguous."
            ),
            "ensemble_threshold": gettext_lazy(
                "Share of ensemble judges that must agree for a pair to be removed as easy (0–1)."
            ),
            "lease_minutes": gettext_lazy("How long a pair stays with an annotator who opened it."),
            "edit_grace_minutes": gettext_lazy(
                "How long after submitting an annotator may still correct a rating, even once "
                "the pair is complete (0: never after completion)."
            ),
            "guidelines": gettext_lazy("Markdown, shown to annotators."),
            "target_half_width": gettext_lazy(
                "Rate until every judge's accuracy is known to ± this (0.03: ±3 points) at 95 %."
            ),
            "judge_labels": gettext_lazy(
                "Pairs still to rate get the judges' label where the judges are surest: as far "
                "down as, with probability 1 − δ, at most α of all the task's pairs that sure "
                "(rated or not; a dropped pair counts against the judges) would not get the "
                "judges' side from the experts. Each export states the share of its own judge "
                "labels proven to agree. Calibrated once the first 100, 200, 400, … pairs in "
                "rating order are decided."
            ),
        }

    def __init__(self, *args, editing: bool = False, **kwargs):
        super().__init__(*args, **kwargs)
        if editing:
            del self.fields["slug"]  # URLs, exports and files name it

    def values(self) -> dict:
        return {name: self.cleaned_data[name] for name in PROJECT_FIELDS}

    def validate_unique(self):
        """The service checks uniqueness and the model's rules, answering with field errors."""


def _quality_number(
    label: "StrOrPromise", *, low: float, high: float, help_text: "StrOrPromise"
) -> forms.FloatField:
    """A quality-control setting, a number from `low` to `high`; optional: left empty, the
    setting keeps its current value."""
    return forms.FloatField(
        label=label, required=False, min_value=low, max_value=high, help_text=help_text
    )


class TaskForm(forms.Form):
    slug = forms.SlugField(
        label=gettext_lazy("Slug"),
        max_length=64,
        help_text=gettext_lazy("Names the task in files and exports."),
    )
    name = forms.CharField(label=gettext_lazy("Name"), max_length=200)
    kind = forms.ChoiceField(label=gettext_lazy("Kind"), choices=Task.Kind.choices)
    aspects = forms.CharField(
        label=gettext_lazy("Aspects"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 5}),
        help_text=gettext_lazy("Rated beside the overall score, one per line: key | Label | help."),
    )
    guidelines = forms.CharField(
        label=gettext_lazy("Guidelines"),
        required=False,
        widget=forms.Textarea(attrs={"rows": 10}),
        help_text=gettext_lazy("Markdown, shown to annotators with the project's guidelines."),
    )

    # Quality control. Left empty, a setting keeps its current value.
    gold_rate = _quality_number(
        gettext_lazy("Gold rate"),
        low=0,
        high=0.5,
        help_text=gettext_lazy(
            "Share of each annotator's pairs that are gold checks (0.1: one in ten)."
        ),
    )
    gold_min_accuracy = _quality_number(
        gettext_lazy("Gold min accuracy"),
        low=0,
        high=1,
        help_text=gettext_lazy(
            "Gold accuracy below this, after the minimum answers, triggers the action."
        ),
    )
    gold_min_answers = forms.IntegerField(
        label=gettext_lazy("Gold min answers"),
        required=False,
        min_value=1,
        max_value=1000,
        help_text=gettext_lazy("Gold answers before an annotator is judged on them."),
    )
    gold_action = forms.ChoiceField(
        label=gettext_lazy("Gold action"), choices=Task.GoldAction.choices, required=False
    )
    min_active_seconds = _quality_number(
        gettext_lazy("Speed floor (s)"),
        low=0,
        high=3600,
        help_text=gettext_lazy("Ratings with less active time than this count as too fast."),
    )

    qualification_required = forms.BooleanField(
        label=gettext_lazy("Qualification required"),
        required=False,
        help_text=gettext_lazy(
            "Annotators answer the qualification set (gold pairs marked for it) first."
        ),
    )
    qualification_pass = _quality_number(
        gettext_lazy("Qualification pass"),
        low=0,
        high=1,
        help_text=gettext_lazy("Share of the qualification set to get right to be admitted (0.8)."),
    )

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
