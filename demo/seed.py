"""The demo project behind `manage.py demo`: four tasks of judgeable pairs drawn with Pillow.

Every scene comes from a random generator seeded with the task and pair number, so a rerun
draws the same records and the same image bytes. Pairs that exist already are left alone and
users, memberships and settings are updated in place: rerunning never duplicates anything.
Which response is the right one is decided per pair but never recorded — the pairs are
unlabelled candidates, queued for the annotators.
"""

import json
import random
import tempfile
from collections.abc import Callable
from pathlib import Path

from django.contrib.auth import get_user_model
from django.db import transaction

from annotation.models import Membership, Pair, Project, Rating, Task
from annotation.services.members import membership_set
from annotation.services.pair_import import pairs_import
from annotation.services.projects import default_aspects
from demo.history import finished_work
from demo.scenes import (
    edit_scene,
    interleaved_scene,
    pick_other,
    reasoning_scene,
    t2i_scene,
)
from judging.models import Judge

PROJECT_SLUG = "demo"
DEFAULT_PASSWORD = "arbiter-demo"
PAIRS_PER_TASK = 10
ANNOTATORS = ("annotator1", "annotator2", "annotator3")
LEAD = "lead"
SOURCE = "arbiter-demo"

TASKS: dict[str, tuple[str, Callable, tuple[str, ...], str]] = {
    "t2i": (
        "Text to image",
        t2i_scene,
        ("painter-v1", "painter-v2", "sketchbot", "pixelsmith-xl"),
        "Check every detail the prompt names: how many objects, their colours, their "
        "positions and any text, letter by letter.",
    ),
    "edit": (
        "Image editing",
        edit_scene,
        ("editor-pro", "retouch-2", "pixelsmith-xl"),
        "Compare each output with the input image: the requested change must be made, and "
        "everything else must stay as it was.",
    ),
    "interleaved": (
        "Interleaved story",
        interleaved_scene,
        ("storyteller-7b", "omni-chat-2", "sketchbot"),
        "Read the text and look at each picture in turn: every picture must show what the text "
        "next to it says (objects, colours, progression).",
    ),
    "reasoning": (
        "Visual reasoning",
        reasoning_scene,
        ("visual-reasoner", "chartmind", "omni-chat-2"),
        "Work the answer out yourself first, then check both the final answer and whether the "
        "reasoning and the marked-up image support it.",
    ),
}

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


def build_records(task_slug: str, folder: Path, count: int = PAIRS_PER_TASK) -> list[dict]:
    """Draw `count` pairs of a demo task into `folder`; native-format records naming them."""
    return [record for record, _good in build_pairs(task_slug, folder, range(1, count + 1))]


def build_pairs(task_slug: str, folder: Path, numbers) -> list[tuple[dict, str]]:
    """The records of pairs `numbers` of a demo task, each with the side ("A" or "B") of its
    better response, which the records never say (the demo's finished work rates by it)."""
    _, builder, models, _ = TASKS[task_slug]
    pairs = []
    for number in numbers:
        rng = random.Random(f"{SOURCE}/{task_slug}/{number}")
        external_id = f"demo-{task_slug}-{number:02d}"

        def save(image, role, stem=external_id):
            name = f"{stem}-{role}.png"
            image.save(folder / name, format="PNG")
            return name

        variant, prompt, good, bad = builder(rng, save, number)
        model_a = rng.choice(models)
        model_b = model_a if rng.random() < 0.3 else pick_other(rng, models, model_a)
        good_first = rng.random() < 0.5
        first, second = (good, bad) if good_first else (bad, good)
        record = {
            "id": external_id,
            "prompt_source": SOURCE,
            "prompt_metadata": {"task": task_slug, "scene": variant},
            "prompt_content": prompt,
            "response_a": {"model_name": model_a, "response_content": first},
            "response_b": {"model_name": model_b, "response_content": second},
        }
        pairs.append((record, "A" if good_first else "B"))
    return pairs


def import_missing(project: Project, task_slug: str, folder: Path, records, *, queue: bool):
    """Import the records whose pairs do not exist yet; returns how many pairs were made."""
    ids = [record["id"] for record in records]
    existing = set(
        Pair.objects.filter(project=project, external_id__in=ids).values_list(
            "external_id", flat=True
        )
    )
    missing = [record for record in records if record["id"] not in existing]
    if not missing:
        return 0
    path = folder / f"{task_slug}-{missing[0]['id']}.jsonl"
    lines = (json.dumps(record, ensure_ascii=False) for record in missing)
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    summary = pairs_import(
        path,
        project_slug=project.slug,
        task_slug=task_slug,
        file_format="native",
        images_dir=folder,
        queue=queue,
    )
    return summary.pairs


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


def demo_seed(password: str = DEFAULT_PASSWORD, *, pairs_per_task: int = PAIRS_PER_TASK) -> dict:
    """Create or refresh the demo project, its pairs and its users; safe to run again."""
    project = _project_and_tasks()
    _users(project, password)
    judges = _baseline_judges()
    new: dict[str, int] = {}
    with tempfile.TemporaryDirectory(prefix="arbiter-demo-") as tmp:
        folder = Path(tmp)
        # Finished work first, while the experts' claims can only reach these pairs.
        finished = finished_work(project, folder, password, judges)
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
