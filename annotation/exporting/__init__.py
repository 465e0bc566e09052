"""The dataset export (docs/export-format.md): `export_dataset` writes a folder,
`export_archive` a .zip of it for downloads."""

from annotation.exporting.archive import DeletingFile, export_archive, open_for_download
from annotation.exporting.errors import ExportRefused
from annotation.exporting.service import FILE_FORMATS, ExportSummary, export_dataset

__all__ = [
    "FILE_FORMATS",
    "DeletingFile",
    "ExportRefused",
    "ExportSummary",
    "export_archive",
    "export_dataset",
    "open_for_download",
]
