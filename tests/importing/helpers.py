"""Helpers shared by the import_pairs tests."""

import hashlib
import io
import json
from pathlib import Path

import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import (
    Asset,
    Assignment,
    Generator,
    Pair,
    Project,
    Prompt,
    Rating,
    Response,
    Task,
)

RED = (200, 40, 40)
BLUE = (40, 40, 200)
GREEN = (40, 200, 40)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_import(path, *, project="proj", task="t2i", file_format="native", images=None, **extra):
    """Run the command with --json and return its summary."""
    out = io.StringIO()
    options = {"project": project, "task": task, "file_format": file_format, "json": True}
    if images is not None:
        options["images"] = str(images)
    options.update(extra)
    call_command("import_pairs", str(path), stdout=out, **options)
    return json.loads(out.getvalue())


def import_error(path, **kwargs) -> str:
    with pytest.raises(CommandError) as excinfo:
        run_import(path, **kwargs)
    return str(excinfo.value)


def media_files(media_root: Path) -> list[Path]:
    root = Path(media_root)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def assert_nothing_written(media_root):
    counts = {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }
    assert counts == dict.fromkeys(counts, 0)
    assert not get_user_model().objects.filter(username__startswith="imported-").exists()
    assert media_files(media_root) == []


def table_counts() -> dict:
    return {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }


def mjbench_row(row_id, label, *, image0="a.png", image1="b.png", **extra) -> dict:
    return {
        "id": row_id,
        "caption": f"caption of {row_id}",
        "image0": image0,
        "image1": image1,
        "label": label,
        **extra,
    }
