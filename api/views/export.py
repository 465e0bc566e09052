"""Dataset export jobs (leads; a job is built in the background, then downloaded as a zip)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, OpenApiResponse, extend_schema
from rest_framework import status
from rest_framework.exceptions import NotFound
from rest_framework.generics import GenericAPIView
from rest_framework.mixins import ListModelMixin
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.response import Response

from api.exception_handler import Conflict
from api.serializers.common import ErrorSerializer
from api.serializers.exports import ExportJobSerializer, ExportStartSerializer
from api.views.common import object_or_404, project_or_404
from exports.jobs import export_job_response, export_job_start
from exports.models import ExportJob
from exports.selectors import export_jobs_for_project
from projects.access import led_projects

PROJECT = OpenApiParameter("project", str, OpenApiParameter.PATH, description="Project id or slug.")
JOB = OpenApiParameter("id", int, OpenApiParameter.PATH, description="Export job id.")
NOT_FOUND = OpenApiResponse(ErrorSerializer, description="No project you lead by this id.")


class _ExportJobs(GenericAPIView):
    """The jobs of a project the caller leads: 404 for anyone else."""

    queryset = ExportJob.objects.none()  # the model, for the schema
    serializer_class = ExportJobSerializer

    def project(self):
        return project_or_404(led_projects(self.request.user), self.kwargs["project"])

    def get_queryset(self):
        return export_jobs_for_project(self.project())

    def get_object(self):
        return object_or_404(self.get_queryset(), self.kwargs["id"])


class ExportJobListView(ListModelMixin, _ExportJobs):
    @extend_schema(
        summary="The project's export jobs (newest first); leads only", parameters=[PROJECT]
    )
    def get(self, request, project):
        return self.list(request)

    @extend_schema(
        summary="Start an export of the project's consensus dataset (docs/export-format.md) "
        "in the background; leads only",
        parameters=[PROJECT],
        request=ExportStartSerializer,
        responses={202: ExportJobSerializer, 404: NOT_FOUND},
    )
    def post(self, request, project):
        found = self.project()
        options = ExportStartSerializer(data=request.data)
        options.is_valid(raise_exception=True)
        data = options.validated_data
        job = export_job_start(
            found,
            request.user,
            file_format=data["format"],
            task_slug=data.get("task"),
            include_dropped=data["include_dropped"],
            with_verdicts=data["with_verdicts"],
            include_archived=data["include_archived"],
        )
        job = self.get_queryset().get(pk=job.pk)  # as it is now (done already when eager)
        return Response(
            self.get_serializer(job).data,
            status=status.HTTP_202_ACCEPTED,
            headers={"Location": self.get_serializer(job).data["url"]},
        )


class ExportJobDetailView(_ExportJobs):
    @extend_schema(summary="One export job; leads only", parameters=[PROJECT, JOB])
    def get(self, request, project, id):
        return Response(self.get_serializer(self.get_object()).data)


class _AnyAccept(DefaultContentNegotiation):
    """The zip is sent whatever the Accept header says; errors are JSON."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportJobDownloadView(_ExportJobs):
    content_negotiation_class = _AnyAccept

    @extend_schema(
        summary="Download a done export job's zip; leads only",
        parameters=[PROJECT, JOB],
        responses={
            (200, "application/zip"): OpenApiTypes.BINARY,
            409: OpenApiResponse(ErrorSerializer, description="The export is not done."),
        },
    )
    def get(self, request, project, id):
        job = self.get_object()
        if job.status != ExportJob.Status.DONE:
            raise Conflict(f"the export is {job.status}, not done")
        response = export_job_response(job)  # streamed from media storage
        if response is None:
            raise NotFound("the export's file is gone")
        return response
