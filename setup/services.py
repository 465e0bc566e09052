"""Creating projects and tasks the way the command line names them (docs/architecture.md §7)."""

import re
from collections.abc import Iterable, Mapping
from typing import NotRequired, TypedDict

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, models, transaction
from django.utils import timezone
from django.utils.translation import gettext

from annotation.models import AspectScore, Rating
from annotation.services.adjudication import project_filter_apply
from content.importing.errors import ImportFailed
from content.models import Pair
from core.errors import Invalid, Refused
from projects.events import published_together
from projects.models import Membership, Project, Task

TASK_KINDS = {choice.value for choice in Task.Kind}
# A task's quality-control settings a lead may change.
QUALITY_SETTINGS = (
    "gold_rate", "gold_min_accuracy", "gold_min_answers", "gold_action", "min_active_seconds",
    "qualification_required", "qualification_pass",
)  # fmt: skip
RESERVED_SLUGS = {"new"}  # /projects/new/ is the page that creates one
_ASPECT_KEY = re.compile(r"[A-Za-z0-9_-]{1,40}")


class Aspect(TypedDict):
    """One aspect a task's annotators rate, as `Task.aspects` stores it (an imported or older
    task's may lack the label and the help)."""

    key: str
    label: NotRequired[str]
    help: NotRequired[str]


# Aspects rated per task kind, after MMRB2's judging criteria.
DEFAULT_ASPECTS = {
    "t2i": [
        ("faithfulness", "Faithfulness to the prompt", "Objects, counts, colours, text, layout."),
        ("quality", "Image quality", "Artefacts, anatomy, realism or style coherence."),
    ],
    "edit": [
        ("instruction", "Follows the edit", "The requested change is made, fully and only it."),
        ("preservation", "Preserves the rest", "What should stay the same stays the same."),
        ("quality", "Image quality", "Seams, artefacts, lighting consistency."),
    ],
    "interleaved": [
        ("text", "Text quality", "Correct, relevant, well written."),
        ("images", "Image quality", "Images are clear and fit the text."),
        ("coherence", "Text–image coherence", "Text and images tell one consistent story."),
    ],
    "reasoning": [
        ("correctness", "Correct answer", "The final answer is right."),
        ("reasoning", "Sound reasoning", "Steps and visual evidence support the answer."),
    ],
    "other": [],
}


def default_aspects(kind: str) -> list[Aspect]:
    return [{"key": k, "label": label, "help": h} for k, label, h in DEFAULT_ASPECTS.get(kind, [])]


def project_get_or_create(
    slug: str, *, scale_points: int | None = None, scores_given: bool = False
) -> tuple[Project, bool]:
    """The project an import names; a new one takes the scale of the file imported into it
    (MMRB2: 6 points), else the default 7. So does a project that has no pairs yet when the
    file carries scores (`scores_given`) and its lead left K to the first file
    (`scale_from_first_file`, ticked by default on the New project form): no rating or pair
    holds the old K, and the settings page can change it back while nothing is rated. Pairs
    without scores, or a K the lead fixed, leave the scale as it is."""
    project = Project.objects.filter(slug=slug).first()
    if project is not None:
        adopts = scores_given and project.scale_from_first_file
        if adopts and scale_points and project.scale_points != scale_points:
            _scale_of_first_file(project, scale_points)
        return project, False
    project = Project(slug=slug, name=slug)
    if scale_points:
        project.scale_points = scale_points
    project.full_clean()
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:  # created meanwhile by a concurrent command
        return Project.objects.get(slug=slug), False
    return project, True


def _scale_of_first_file(project: Project, scale_points: int) -> None:
    """Give `project` the scale of the file being imported when nothing was imported into it
    yet. Locks the project row first, the order every import takes
    (imports/services/pair_import.py)."""
    with transaction.atomic():
        locked = Project.objects.select_for_update().get(pk=project.pk)
        if Pair.objects.filter(project=locked).exists():
            return  # its pairs keep the scale they were imported on
        locked.scale_points = scale_points
        locked.scale_from_first_file = False  # decided: the settings page shows the K taken
        locked.full_clean()
        locked.save(update_fields=["scale_points", "scale_from_first_file"])
    project.scale_points, project.scale_from_first_file = scale_points, False


def task_get_or_create(project: Project, slug: str) -> Task:
    """The task an import names (created when missing; its kind is the slug when the slug is
    a known kind). An archived task refuses imports (projects/services/tasks.py)."""
    # The manager built by as_manager() loses its model's type.
    task: Task | None = Task.objects.filter(project=project, slug=slug).first()
    if task is not None:
        if task.archived_at is not None:
            raise ImportFailed(
                f"task {slug!r} is archived: restore it in the project's settings to import "
                "into it, or choose another task"
            )
        return task
    kind = slug if slug in TASK_KINDS else Task.Kind.OTHER
    task = Task(project=project, slug=slug, name=slug, kind=kind, aspects=default_aspects(kind))
    task.full_clean(exclude=["project"])
    try:
        with transaction.atomic():
            task.save()
    except IntegrityError:  # created meanwhile by a concurrent command
        return Task.objects.get(project=project, slug=slug)
    return task


# --------------------------------------------------------------------------- the lead's pages

PROJECT_FIELDS = (
    "name",
    "scale_points",
    "scale_from_first_file",
    "annotators_per_pair",
    "max_span",
    "ambiguous_half_width",
    "ensemble_threshold",
    "lease_minutes",
    "edit_grace_minutes",
    "guidelines",
    "target_half_width",
    "judge_labels",
    "judge_labels_alpha",
    "judge_labels_delta",
)


def _checked(instance: models.Model, exclude: Iterable[str] = ()) -> None:
    """Model validation as a domain error, so pages and the API answer 400 with the fields."""
    try:
        instance.full_clean(exclude=list(exclude))
    except ValidationError as invalid:
        raise Invalid("; ".join(invalid.messages), fields=invalid.message_dict) from None


@transaction.atomic
def project_create(*, creator: User, slug: str, **values: object) -> Project:
    """A new project, with `creator` as its lead. `values` are PROJECT_FIELDS."""
    if slug in RESERVED_SLUGS:
        names_a_page = gettext("%(slug)s names a page; choose another.") % {"slug": repr(slug)}
        raise Invalid("reserved slug", fields={"slug": [names_a_page]})
    project = Project(slug=slug, **{k: v for k, v in values.items() if k in PROJECT_FIELDS})
    _checked(project)
    try:
        with transaction.atomic():
            project.save()
    except IntegrityError:
        raise Invalid(
            "a project with this slug exists", fields={"slug": [gettext("This slug is taken.")]}
        ) from None
    Membership.objects.create(user=creator, project=project, role=Membership.Role.LEAD)
    return project


def project_update(project: Project, **values: object) -> int:
    """Change the project's settings (PROJECT_FIELDS). K cannot change once ratings exist
    (Project.clean); a new N or filter re-decides the pairs it concerns, and announces those
    decided otherwise (annotation/services/consensus.py). Returns how many pairs changed
    status."""
    with transaction.atomic():
        project = Project.objects.select_for_update().get(pk=project.pk)
        before = (project.annotators_per_pair, project.max_span, project.ambiguous_half_width)
        for name, value in values.items():
            if name in PROJECT_FIELDS:
                setattr(project, name, value)
        _checked(project)
        project.save()
    after = (project.annotators_per_pair, project.max_span, project.ambiguous_half_width)
    if after == before:
        return 0
    with published_together():  # every batch's re-decisions, announced as one burst
        return project_filter_apply(project)


def aspects_parse(text: str) -> list[Aspect]:
    """The task form's aspects, one per line: `key | Label | help` (label and help optional)."""
    aspects: list[Aspect] = []
    errors: list[str] = []
    seen: set[str] = set()
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        key, label, help_text = ([p.strip() for p in line.split("|", 2)] + ["", ""])[:3]
        if not _ASPECT_KEY.fullmatch(key):
            errors.append(
                gettext("line %(number)s: the key must be letters, digits, - or _ (≤ 40)")
                % {"number": number}
            )
        elif key in seen:
            errors.append(
                gettext("line %(number)s: %(key)s is listed twice")
                % {"number": number, "key": repr(key)}
            )
        seen.add(key)
        aspects.append({"key": key, "label": label or key, "help": help_text})
    if errors:
        raise Invalid("; ".join(errors), fields={"aspects": errors})
    return aspects


def aspects_text(aspects: list[Aspect]) -> str:
    return "\n".join(
        " | ".join(p for p in (a["key"], a.get("label", ""), a.get("help", "")) if p).rstrip()
        for a in aspects
    )


@transaction.atomic
def task_save(
    project: Project,
    *,
    slug: str,
    name: str,
    kind: str,
    aspects: list[Aspect],
    guidelines: str = "",
    quality: Mapping[str, object] | None = None,
    task: Task | None = None,
) -> Task:
    """Create a task, or change one. Once a task has ratings its slug stays (files and exports
    name it) and no rated aspect may go; names, help, guidelines and new aspects may change."""
    if task is not None:
        task = Task.objects.select_for_update().get(pk=task.pk, project=project)
        rated = Rating.objects.filter(pair__task=task).exists()
        if rated and slug != task.slug:
            raise Invalid(
                "rated task", fields={"slug": [gettext("Ratings exist: the slug stays.")]}
            )
        if rated:
            kept = {a["key"] for a in aspects}
            scored = set(
                AspectScore.objects.filter(rating__pair__task=task)
                .values_list("aspect", flat=True)
                .distinct()
            )
            if missing := sorted(scored - kept):
                raise Invalid(
                    "rated aspects removed",
                    fields={
                        "aspects": [
                            gettext("Ratings score %(aspects)s: keep them.")
                            % {"aspects": ", ".join(missing)}
                        ]
                    },
                )
    else:
        task = Task(project=project)
    task.slug, task.name, task.kind, task.aspects = slug, name, kind, aspects
    task.guidelines = guidelines
    for name, value in (quality or {}).items():
        if name not in QUALITY_SETTINGS:
            raise Invalid(f"unknown task setting {name!r}")
        setattr(task, name, value)
    _checked(task, exclude=["project"])
    try:
        with transaction.atomic():
            task.save()
    except IntegrityError:
        taken = [gettext("This project has a task with this slug.")]
        raise Invalid("slug taken", fields={"slug": taken}) from None
    return task


@transaction.atomic
def pairs_queue(project: Project, *, task: Task | None = None) -> int:
    """Send the project's (or task's) candidate pairs straight to annotation, without the
    judge ensemble. Returns how many were queued. An archived task's pairs stay where they
    are (no annotator would see them): `Refused` when it is the task named."""
    candidates = Pair.objects.filter(project=project, status=Pair.Status.CANDIDATE)
    if task is not None and task.archived_at is not None:
        raise Refused(
            gettext("task %(name)s is archived: restore it in the settings first")
            % {"name": task.name}
        )
    if task is not None:
        candidates = candidates.filter(task=task)
    else:
        candidates = candidates.filter(task__archived_at__isnull=True)
    return candidates.update(status=Pair.Status.QUEUED, updated_at=timezone.now())
