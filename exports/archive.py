"""`export_archive`: the export as one .zip file, built by an export job (annotation/services/
exports.py) for the lead's page and the API to download.

The archive holds exactly the export folder (unzip it into DIR). Images and Parquet files are
stored as they are (already compressed); JSON text is deflated."""

import os
import tempfile
import zipfile
from pathlib import Path

from django.conf import settings

from exports.writer import export_dataset
from projects.models import Project

_DEFLATED_SUFFIXES = {".json", ".jsonl"}


def export_archive(
    project: Project,
    *,
    file_format: str = "jsonl",
    task_slug: str | None = None,
    include_dropped: bool = False,
    with_verdicts: bool = False,
    include_archived: bool = True,
) -> Path:
    """Export into a temporary folder and zip it; the path of the zip, which the caller
    moves or deletes."""
    # Django's temporary folder for uploads, when configured: big files go where the operator
    # has room for them.
    temp_root = settings.FILE_UPLOAD_TEMP_DIR or None
    with tempfile.TemporaryDirectory(prefix="arbiter-export-", dir=temp_root) as work:
        folder = Path(work) / "export"
        export_dataset(
            project,
            folder,
            file_format=file_format,
            task_slug=task_slug,
            include_dropped=include_dropped,
            with_verdicts=with_verdicts,
            include_archived=include_archived,
        )
        handle, name = tempfile.mkstemp(
            prefix=f"arbiter-{project.slug}-", suffix=".zip", dir=temp_root
        )
        archive = Path(name)
        try:
            with os.fdopen(handle, "wb") as raw, zipfile.ZipFile(raw, "w") as zipped:
                for path in _members(folder):
                    compression = (
                        zipfile.ZIP_DEFLATED
                        if path.suffix in _DEFLATED_SUFFIXES
                        else zipfile.ZIP_STORED
                    )
                    zipped.write(path, path.relative_to(folder).as_posix(), compression)
        except BaseException:
            archive.unlink(missing_ok=True)
            raise
    return archive


def _members(folder: Path) -> list[Path]:
    """manifest.json first, then the task files, then the images."""
    files = sorted(p for p in folder.rglob("*") if p.is_file() and p.name != "manifest.json")
    files.sort(key=lambda p: len(p.relative_to(folder).parts))  # stable: top level first
    return [folder / "manifest.json", *files]
