"""The dataset export (docs/export-format.md), an app above annotation, judging and metrics:
`service.export_dataset` writes a folder, `archive.export_archive` a .zip of it, which an
export job (`models.ExportJob`, `jobs`, `tasks`) keeps for download."""
