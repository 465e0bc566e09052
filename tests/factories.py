"""Small builders for test data: images on disk, pair records, queued pairs, members,
invitations, API keys."""

import io
import itertools
import json
from datetime import timedelta
from pathlib import Path

from django.contrib.auth.models import User
from django.utils import timezone
from PIL import Image

from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.models import Invitation, Membership, Project, Task
from projects.services.api_tokens import api_token_create
from projects.services.invitations import invitation_create


def write_image(path: Path, color=(200, 40, 40), size=(24, 16), fmt="PNG") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, fmt)
    return path


def image_bytes(color=(0, 0, 0), size=(8, 8), fmt="PNG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, fmt)
    return buffer.getvalue()


def mmrb2_pair(
    pair_id: str,
    *,
    scores=(5, 6, 5),
    chosen="A",
    image_a="a.png",
    image_b="b.png",
    prompt=None,
    model_a="gen-1",
    model_b="gen-2",
) -> dict:
    pair = {
        "id": pair_id,
        "prompt_source": "unit-test",
        "prompt_metadata": {"id": pair_id},
        "response_a": {"model_name": model_a, "response_content": [["image", image_a]]},
        "response_b": {"model_name": model_b, "response_content": [["image", image_b]]},
        "chosen": chosen,
        "human_annotations": list(scores),
    }
    if prompt is not None:
        pair["prompt_content"] = prompt
    return pair


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def write_mmrb2(path: Path, pairs) -> Path:
    path.write_text(json.dumps({"pairs": list(pairs)}))
    return path


_serial = itertools.count()


def queued_pairs(
    folder,
    project_slug="ann",
    task_slug="t2i",
    count=6,
    *,
    image_size=(40, 30),
    paragraphs=0,
    **project_settings,
):
    """Import `count` unlabelled pairs (text prompt, one image per response) and queue them.
    Model names are in the external ids on purpose: pages must not show them. `paragraphs`
    adds that many paragraphs of text to each response (long answers, as in MMRB2)."""
    images = folder / f"images-{next(_serial)}"
    records = []
    width, height = image_size
    essay = [["text", f"Paragraph {n}: " + "the response explains its choice. " * 8]
             for n in range(1, paragraphs + 1)]  # fmt: skip
    for i in range(count):
        write_image(images / f"a{i}.png", color=(200, i * 7 % 255, 40), size=(width, height))
        write_image(images / f"b{i}.png", color=(20, 90, i * 11 % 255), size=(height, width))
        records.append(
            {
                "id": f"{task_slug}-{i}-secretmodelA-vs-secretmodelB",
                "prompt_source": "unit",
                "prompt_content": [["text", f"Draw scene number {i}, *please*"]],
                "response_a": {
                    "model_name": "secretmodelA",
                    "response_content": [["text", f"A says {i}"], ["image", f"a{i}.png"], *essay],
                },
                "response_b": {
                    "model_name": "secretmodelB",
                    "response_content": [["image", f"b{i}.png"], ["text", f"B says {i}"], *essay],
                },
            }
        )
    source = write_jsonl(folder / f"pairs-{next(_serial)}.jsonl", records)
    pairs_import(source, project_slug=project_slug, task_slug=task_slug, images_dir=images)
    project = Project.objects.get(slug=project_slug)
    Project.objects.filter(pk=project.pk).update(**{"scale_points": 7, **project_settings})
    task = Task.objects.get(project=project, slug=task_slug)
    Pair.objects.filter(task=task).update(status=Pair.Status.QUEUED)
    return Task.objects.select_related("project").get(pk=task.pk)


def in_import_order(task) -> None:
    """Give the task's pairs draws in import order: the claim serves pairs nobody started by
    their draw (random), and a test that walks named pairs one by one needs them in its order."""
    pairs = list(Pair.objects.filter(task=task).order_by("id"))
    for number, pair in enumerate(pairs, start=1):
        pair.draw = number / len(pairs)
    Pair.objects.bulk_update(pairs, ["draw"])


def member(username, project, role="annotator", password="pw-annotate-1"):
    user = User.objects.create_user(username, password=password)
    Membership.objects.create(user=user, project=project, role=role)
    return user


def invitation(project, created_by, **options):
    """An open invitation to `project` and its raw token (`.invitation`, `.token`)."""
    return invitation_create(project=project, created_by=created_by, **options)


def invitation_expired(created, days_ago=1):
    """Move an invitation into the past: it expired `days_ago` days ago."""
    past = timezone.now() - timedelta(days=days_ago)
    Invitation.objects.filter(pk=created.invitation.pk).update(
        created_at=past - timedelta(days=7), expires_at=past
    )


def api_key(user, name="test token", **options) -> str:
    """A new API token of the user (projects/services/api_tokens.py); its key."""
    return api_token_create(user=user, name=name, **options).key
