"""Helpers of the export tests: run an export, read what it wrote."""

import hashlib
import io
import json
from pathlib import Path

from django.core.management import call_command


def run_export(project, out: Path, **options) -> dict:
    """The export_dataset command with --json; its summary."""
    stdout = io.StringIO()
    call_command(
        "export_dataset", project=project.slug, out=str(out), json=True, stdout=stdout, **options
    )
    return json.loads(stdout.getvalue())


def jsonl_rows(folder: Path, task: str) -> list[dict]:
    lines = (folder / f"{task}.jsonl").read_text(encoding="utf-8").split("\n")
    return [json.loads(line) for line in lines if line]


def by_id(rows: list[dict]) -> dict[str, dict]:
    return {row["id"]: row for row in rows}


def manifest_of(folder: Path) -> dict:
    return json.loads((folder / "manifest.json").read_text(encoding="utf-8"))


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def files_under(folder: Path) -> set[str]:
    return {p.relative_to(folder).as_posix() for p in folder.rglob("*") if p.is_file()}


def export_job_path(job) -> Path | None:
    """The done job's zip on the local disk (media storage in these tests), or None."""
    from django.conf import settings

    from exports.jobs import export_job_file

    name = export_job_file(job)
    return None if name is None else Path(settings.MEDIA_ROOT) / name
