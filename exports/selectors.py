"""Reads of the export jobs."""

from django.db.models import QuerySet

from exports.models import ExportJob
from projects.models import Project


def export_jobs_for_project(project: Project) -> QuerySet[ExportJob]:
    """The project's export jobs, newest first, with what their lists show."""
    return ExportJob.objects.filter(project=project).select_related("requested_by", "task")
