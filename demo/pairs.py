"""The demo's tasks and their pairs, drawn with Pillow (demo/scenes.py) and imported through
the importer as a lead's file would be. Both the seed (demo/seed.py) and the finished work
(demo/history.py) take their pairs here.

Every scene comes from a random generator seeded with the task and pair number, so a rerun
draws the same records and the same image bytes; pairs that exist already are left alone.
"""

import json
import random
from collections.abc import Callable
from pathlib import Path

from content.models import Pair
from demo.scenes import (
    edit_scene,
    interleaved_scene,
    pick_other,
    reasoning_scene,
    t2i_scene,
)
from imports.services.pair_import import pairs_import
from projects.models import Project

PAIRS_PER_TASK = 10
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
