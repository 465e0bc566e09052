"""The demo project behind `manage.py demo`: four tasks of judgeable pairs drawn with Pillow.

The tasks and their pairs come from demo/pairs.py, drawn the same on every run. Pairs that
exist already are left alone and users, memberships and settings are updated in place:
rerunning never duplicates anything. Which response is the right one is decided per pair but
never recorded — the pairs are unlabelled candidates, queued for the annotators.
"""

import tempfile
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Rating
from demo.history import finished_work
from demo.pairs import PAIRS_PER_TASK, TASKS, build_records, import_missing
from judging.models import Judge
from projects.models import Membership, Project, Task
from projects.services.members import membership_set, project_creator_grant
from setup.services import default_aspects

PROJECT_SLUG = "demo"
DEFAULT_PASSWORD = "arbiter-demo"
ANNOTATORS = ("annotator1", "annotator2", "annotator3")
LEAD = "lead"

GUIDELINES = """\
# Demo benchmark

Each item shows a **prompt** and two responses side by side. Look at both responses closely
(open the images at full size), then say which one answers the prompt better.

## The 7-point scale

The scale runs from *the left response is much better* to *the right response is much
better*; the side you choose says which response you prefer, the distance from the middle
how strongly.

- **Much better** (outer points): one response is clearly right and the other clearly wrong.
- **Better**: both have flaws, but one has a clear, important advantage.
- **Slightly better**: a small but real difference.
- **About the same** (middle point): no preference; use it sparingly.

Judge what the prompt asks for (counts, colours, text, edits, story, answer) before looks.
The model names are hidden on purpose. Skip an item if you cannot judge it, and say why.
"""


@transaction.atomic
def _project_and_tasks() -> Project:
    project, created = Project.objects.get_or_create(
        slug=PROJECT_SLUG,
        defaults={"name": "Demo benchmark", "scale_points": 7, "annotators_per_pair": 3},
    )
    project.name, project.guidelines = "Demo benchmark", GUIDELINES
    if not Rating.objects.filter(pair__project=project).exists():  # never rescale ratings
        project.scale_points, project.annotators_per_pair = 7, 3
    project.full_clean()
    project.save()
    for slug, (name, _, _, guidelines) in TASKS.items():
        Task.objects.update_or_create(
            project=project,
            slug=slug,
            defaults={
                "name": name,
                "kind": slug,
                "aspects": default_aspects(slug),
                "guidelines": guidelines,
            },
        )
    return project


@transaction.atomic
def _users(project: Project, password: str) -> None:
    user_model = get_user_model()
    roles = [(name, Membership.Role.ANNOTATOR) for name in ANNOTATORS]
    for username, role in [*roles, (LEAD, Membership.Role.LEAD)]:
        user, _ = user_model.objects.get_or_create(username=username)
        user.is_active = True
        user.is_staff = False  # the admin is for operators only
        user.set_password(password)
        user.save()
        membership_set(user, project, role)
        if role == Membership.Role.LEAD:
            project_creator_grant(user)  # the walkthrough starts a project of its own


def demo_seed(password: str = DEFAULT_PASSWORD, *, pairs_per_task: int = PAIRS_PER_TASK) -> dict:
    """Create or refresh the demo project, its pairs and its users; safe to run again."""
    project = _project_and_tasks()
    _users(project, password)
    judges = _baseline_judges()
    new: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-demo-") as tmp:
        folder = Path(tmp)
        # Finished work first, while the experts' claims can only reach these pairs.
        finished = finished_work(project, folder, password, judges, lead=LEAD)
        for slug in TASKS:
            records = build_records(slug, folder, pairs_per_task)
            new[slug] = import_missing(project, slug, folder, records, queue=True)
    queued = sum(new.values())
    counts = {slug: project.pairs.filter(task__slug=slug).count() for slug in TASKS}
    return {
        "project": project.slug,
        "pairs": counts,
        "new_pairs": new,
        "newly_queued": queued,
        "annotators": list(ANNOTATORS),
        "lead": LEAD,
        "usernames": [*ANNOTATORS, LEAD],
        "judges": judges,
        "finished": finished,
    }


def _baseline_judges() -> list[str]:
    """Three offline judges of the operator's (every project may run them), so that a lead can
    try judge runs without any connection or key: two pairwise baselines and a pointwise one
    (seeded scores on 1-10 for each response alone)."""
    pointwise = {kind: "pointwise-1-10" for kind in TASKS}
    for name, backend, sampling, templates in (
        ("always-a", "always-a", {}, {}),
        ("coin", "random", {"seed": 1}, {}),
        ("dice-1-10", "random", {"seed": 2}, pointwise),
    ):
        Judge.objects.get_or_create(
            name=name,
            project=None,
            defaults={"backend": backend, "sampling": sampling, "templates": templates},
        )
    return ["always-a", "coin", "dice-1-10"]
