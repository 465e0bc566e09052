"""Reads of the export jobs."""

from django.db.models import QuerySet

from exports.models import ExportJob


def export_jobs_for_project(project) -> QuerySet[ExportJob]:
    """The project's export jobs, newest first, with what their lists show."""
    return ExportJob.objects.filter(project=project).select_related("requested_by", "task")
