"""The data of the annotate benchmarks (bench.annotate and bench.load; the judge and
dashboards benchmarks seed it too): the name of their PostgreSQL database,
`arbiter_bench_annotate`, and synthetic MMRB2-like data: 4,000 queued pairs over four tasks
(t2i, edit, interleaved, reasoning; text and Pillow-drawn images, 1 to 24 parts per
response), 30 annotators, and optionally part of a campaign already rated (prefill).
"""

import json
import random
import time
from pathlib import Path

DB_NAME = "arbiter_bench_annotate"
PROJECT = "mmrb2-bench"
TASKS = ("t2i", "edit", "interleaved", "reasoning")
PAIRS_PER_TASK = 1000
ANNOTATORS = 30
PASSWORD = "bench-annotate-pw"

_VOCABULARY = (
    "the a red blue green small large cube sphere left right above below image shows "
    "three two four answer because therefore step first then finally count colour shape "
    "object scene prompt edit keep background foreground text label sign chart value "
    "bar line axis total mean result correct region marked circle arrow person dog cat"
)
WORDS = _VOCABULARY.split()


# ---------------------------------------------------------------- synthetic MMRB2-like pairs


class _Drawer:
    """Small, distinct PNGs (a numbered colour field with a few shapes)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.count = 0

    def __call__(self, rng: random.Random) -> str:
        from PIL import Image, ImageDraw

        self.count += 1
        n = self.count
        size = rng.choice([(96, 96), (128, 96), (96, 128), (120, 80)])
        image = Image.new("RGB", size, (n % 251, (n // 251) % 251, 40 + (n // 63001) % 200))
        draw = ImageDraw.Draw(image)
        for _ in range(3):
            x, y = rng.randrange(size[0] - 20), rng.randrange(size[1] - 20)
            colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            draw.rectangle((x, y, x + rng.randrange(8, 20), y + rng.randrange(8, 20)), colour)
        name = f"img{n:06d}.png"
        image.save(self.folder / name, format="PNG")
        return name


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraphs(rng: random.Random, count: int, markdown: bool = False) -> str:
    paragraphs = [
        " ".join(_sentence(rng, rng.randint(8, 18)) for _ in range(rng.randint(2, 4)))
        for _ in range(count)
    ]
    if markdown:
        paragraphs.append(
            "\n".join(f"{i}. **Step {i}**: {_sentence(rng, 10)}" for i in range(1, 4))
        )
    return "\n\n".join(paragraphs)


def _response(task: str, rng: random.Random, draw, number: int) -> list:
    if task == "t2i":
        count = rng.randint(2, 4) if rng.random() < 0.1 else 1
        return [["image", draw(rng)] for _ in range(count)]
    if task == "edit":
        return [["image", draw(rng)]]
    if task == "interleaved":
        steps = 12 if number % 100 == 0 else rng.randint(1, 6)  # a few very long stories
        parts = []
        for _ in range(steps):
            parts += [["text", _paragraphs(rng, 1)], ["image", draw(rng)]]
        return parts
    # reasoning: a long trace, with 0-3 marked-up images and commentary
    parts = [["text", _paragraphs(rng, rng.randint(2, 4), markdown=True)]]
    for _ in range(rng.randint(0, 3)):
        parts += [["image", draw(rng)], ["text", _paragraphs(rng, 1)]]
    return parts


def _prompt(task: str, rng: random.Random, draw) -> list:
    text = ["text", _paragraphs(rng, 1)]
    if task in ("edit", "reasoning") or (task == "interleaved" and rng.random() < 0.3):
        return [text, ["image", draw(rng)]]
    return [text]


def build_records(task: str, count: int, draw) -> list[dict]:
    """`count` import records (native format) of `task`, the same on every run."""
    records = []
    models = ["gen-alpha", "gen-beta", "gen-gamma", "gen-delta"]
    for number in range(1, count + 1):
        rng = random.Random(f"bench/{task}/{number}")
        model_a = rng.choice(models)
        records.append(
            {
                "id": f"{task}-{number:04d}",
                "prompt_source": "arbiter-bench",
                "prompt_metadata": {"task": task, "number": number},
                "prompt_content": _prompt(task, rng, draw),
                "response_a": {
                    "model_name": model_a,
                    "response_content": _response(task, rng, draw, number),
                },
                "response_b": {
                    "model_name": rng.choice([m for m in models if m != model_a]),
                    "response_content": _response(task, rng, draw, number),
                },
            }
        )
    return records


# ---------------------------------------------------------------- seeding


def seed(
    work: Path,
    *,
    pairs_per_task: int = PAIRS_PER_TASK,
    annotators: int = ANNOTATORS,
    prefill: float = 0.0,
    tasks=TASKS,
) -> dict:
    """Project, `tasks` (all four by default) of queued pairs, `annotators` users; Django must
    be set up."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.db import connection

    from content.models import Asset, Pair
    from imports.services.pair_import import pairs_import
    from projects.models import Membership, Project

    started = time.perf_counter()
    images = work / "images"
    images.mkdir(parents=True, exist_ok=True)
    draw = _Drawer(images)
    for task in tasks:
        source = work / f"{task}.jsonl"
        records = build_records(task, pairs_per_task, draw)
        source.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        print(f"  {task}: {len(records)} pairs drawn ({draw.count} images so far), importing")
        pairs_import(source, project_slug=PROJECT, task_slug=task, images_dir=images)
    project = Project.objects.get(slug=PROJECT)
    Project.objects.filter(pk=project.pk).update(
        scale_points=7, annotators_per_pair=3, guidelines=_paragraphs(random.Random(1), 3)
    )
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    password = make_password(PASSWORD)  # hashed once: PBKDF2 per user would take minutes
    users = User.objects.bulk_create(
        User(username=f"annotator{i:02d}", password=password) for i in range(1, annotators + 1)
    )
    Membership.objects.bulk_create(
        Membership(user=u, project=project, role=Membership.Role.ANNOTATOR) for u in users
    )
    prefilled = prefill_ratings(project, users, prefill) if prefill > 0 else {}
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # planner statistics, as autovacuum would gather them
    return {
        "pairs": Pair.objects.filter(project=project).count(),
        "images": Asset.objects.count(),
        "annotators": len(users),
        "prefill": prefilled,
        "seed_s": round(time.perf_counter() - started, 1),
    }


def prefill_ratings(project, users, fraction: float) -> dict:
    """A campaign under way: `fraction` of each task's pairs complete (N ratings by random
    annotators), another fraction/5 partly rated; derived columns by pairs_decide."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Assignment, Rating
    from annotation.services.consensus import pairs_decide
    from annotation.services.throughput import annotator_days_rebuild
    from content.models import Pair

    rng = random.Random("bench/prefill")
    n = project.annotators_per_pair
    now = timezone.now()
    counts = {"complete": 0, "partial": 0, "ratings": 0}
    with transaction.atomic():
        for task in project.tasks.all():
            ids = list(Pair.objects.filter(task=task).values_list("id", flat=True))
            rng.shuffle(ids)
            complete = ids[: int(len(ids) * fraction)]
            partial = ids[len(complete) : len(complete) + int(len(ids) * fraction / 5)]
            plan = [(p, n) for p in complete] + [(p, rng.randint(1, n - 1)) for p in partial]
            assignments = []
            for pair_id, raters in plan:
                for user in rng.sample(users, raters):
                    assignments.append(
                        Assignment(
                            pair_id=pair_id,
                            annotator=user,
                            swapped=rng.random() < 0.5,
                            status=Assignment.Status.SUBMITTED,
                            submitted_at=now,
                        )
                    )
            Assignment.objects.bulk_create(assignments, batch_size=1000)
            Rating.objects.bulk_create(
                (
                    Rating(
                        assignment=a,
                        pair_id=a.pair_id,
                        annotator=a.annotator,
                        scale=project.scale_points,
                        overall=rng.randint(1, project.scale_points),
                        active_seconds=rng.uniform(20, 300),
                    )
                    for a in assignments
                ),
                batch_size=1000,
            )
            touched = list(Pair.objects.filter(pk__in=[p for p, _ in plan]))
            pairs_decide(touched, project)
            Pair.objects.filter(pk__in=[p for p, _ in plan], rating_count__lt=n).update(
                status=Pair.Status.IN_PROGRESS
            )
            counts["complete"] += len(complete)
            counts["partial"] += len(partial)
            counts["ratings"] += len(assignments)
        annotator_days_rebuild(project)  # the overview's throughput, as the service counts it
    return counts


def rating_form(rng: random.Random, task) -> dict:
    """The POST data of a submit on the annotate page of `task`, every aspect rated."""
    data = {
        "action": "submit",
        "overall": str(rng.randint(1, 7)),
        "rationale": _sentence(rng, 12),
        "active_seconds": f"{rng.uniform(20, 240):.1f}",
    }
    for aspect in task.aspects:  # every aspect, so that the query count does not vary
        data[f"aspect_{aspect['key']}"] = str(rng.randint(1, 7))
    return data
