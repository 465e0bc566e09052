"""The dataset export (docs/export-format.md): `export_dataset` writes a folder,
`export_archive` a .zip of it, which an export job keeps for download."""

from annotation.exporting.archive import export_archive
from annotation.exporting.errors import ExportRefused
from annotation.exporting.service import (
    FILE_FORMATS,
    ExportSummary,
    export_dataset,
    export_tasks,
)

__all__ = [
    "FILE_FORMATS",
    "ExportRefused",
    "ExportSummary",
    "export_archive",
    "export_dataset",
    "export_tasks",
]
