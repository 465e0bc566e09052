"""Creating projects and tasks the way the command line names them (docs/architecture.md §7)."""

from django.db import IntegrityError, transaction

from annotation.models import Project, Task

TASK_KINDS = {choice.value for choice in Task.Kind}

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


def default_aspects(kind: str) -> list[dict]:
    return [{"key": k, "label": label, "help": h} for k, label, h in DEFAULT_ASPECTS.get(kind, [])]


def project_get_or_create(slug: str, *, scale_points: int | None = None) -> tuple[Project, bool]:
    """The project named on the command line; a new one takes the scale of the file imported
    into it (MMRB2: 6 points), else the default 7."""
    project = Project.objects.filter(slug=slug).first()
    if project is not None:
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


def task_get_or_create(project: Project, slug: str) -> Task:
    """A task named on the command line; its kind is the slug when the slug is a known kind."""
    task = Task.objects.filter(project=project, slug=slug).first()
    if task is not None:
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
