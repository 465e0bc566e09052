"""Fixtures of the annotation tests: a project with queued pairs and its annotators."""

import itertools

import pytest
from django.contrib.auth.models import User

from annotation.models import Membership, Pair, Project, Task
from annotation.services.pair_import import pairs_import
from tests.factories import write_image, write_jsonl

_serial = itertools.count()


def queued_pairs(folder, project_slug="ann", task_slug="t2i", count=6, **project_settings):
    """Import `count` unlabelled pairs (text prompt, one image per response) and queue them.
    Model names are in the external ids on purpose: pages must not show them."""
    images = folder / f"images-{next(_serial)}"
    records = []
    for i in range(count):
        write_image(images / f"a{i}.png", color=(200, i * 7 % 255, 40), size=(40, 30))
        write_image(images / f"b{i}.png", color=(20, 90, i * 11 % 255), size=(30, 40))
        records.append(
            {
                "id": f"{task_slug}-{i}-secretmodelA-vs-secretmodelB",
                "prompt_source": "unit",
                "prompt_content": [["text", f"Draw scene number {i}, *please*"]],
                "response_a": {
                    "model_name": "secretmodelA",
                    "response_content": [["text", f"A says {i}"], ["image", f"a{i}.png"]],
                },
                "response_b": {
                    "model_name": "secretmodelB",
                    "response_content": [["image", f"b{i}.png"], ["text", f"B says {i}"]],
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


def member(username, project, role="annotator", password="pw-annotate-1"):
    user = User.objects.create_user(username, password=password)
    Membership.objects.create(user=user, project=project, role=role)
    return user


@pytest.fixture
def task(tmp_path):
    return queued_pairs(tmp_path)


@pytest.fixture
def annotators(task):
    return [member(f"ann{i}", task.project) for i in range(1, 5)]
