"""Downloads: the dataset export (a zip, for leads) and images by content hash."""

import re

from django.http import FileResponse
from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import OpenApiParameter, extend_schema
from rest_framework import serializers
from rest_framework.exceptions import NotFound
from rest_framework.negotiation import DefaultContentNegotiation
from rest_framework.views import APIView

from annotation.exporting import ExportRefused, export_archive, open_for_download
from annotation.exporting.service import FILE_FORMATS
from annotation.selectors import assets_by_sha
from api.selectors import lead_projects
from api.views.common import project_or_404, refused

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


class ExportQuerySerializer(serializers.Serializer):
    format = serializers.ChoiceField(choices=FILE_FORMATS, default="jsonl")
    task = serializers.SlugField(
        max_length=64, required=False, help_text="Only this task (slug); all when absent."
    )
    include_dropped = serializers.BooleanField(default=False)
    with_verdicts = serializers.BooleanField(default=False)


class _FormatIsAParameter(DefaultContentNegotiation):
    """`?format=` names the export's file format here, not DRF's renderer."""

    def select_renderer(self, request, renderers, format_suffix=None):
        return renderers[0], renderers[0].media_type


class ExportView(APIView):
    query_serializer_class = ExportQuerySerializer
    content_negotiation_class = _FormatIsAParameter

    @extend_schema(
        summary="Download the project's consensus dataset as a zip (docs/export-format.md); "
        "leads only",
        parameters=[
            OpenApiParameter(
                "project", str, OpenApiParameter.PATH, description="Project id or slug."
            ),
            ExportQuerySerializer,
        ],
        responses={(200, "application/zip"): OpenApiTypes.BINARY},
    )
    def get(self, request, project):
        found = project_or_404(lead_projects(request.user), project)
        query = ExportQuerySerializer(data=request.query_params)
        query.is_valid(raise_exception=True)
        options = query.validated_data
        try:
            archive = export_archive(
                found,
                file_format=options["format"],
                task_slug=options.get("task"),
                include_dropped=options["include_dropped"],
                with_verdicts=options["with_verdicts"],
            )
        except ExportRefused as refusal:
            raise refused(str(refusal)) from None
        # The file deletes itself when Django closes it, after the last byte or on abort.
        return FileResponse(
            open_for_download(archive),
            as_attachment=True,
            filename=f"{found.slug}-{options['format']}.zip",
            content_type="application/zip",
        )


class AssetView(APIView):
    @extend_schema(
        summary="An image by the SHA-256 of its bytes, with its real content type",
        responses={(200, "image/*"): OpenApiTypes.BINARY},
    )
    def get(self, request, sha256):
        asset = assets_by_sha({sha256}).get(sha256) if _SHA256.match(sha256) else None
        if asset is None:
            raise NotFound("no such image")
        try:
            handle = asset.file.open("rb")
        except FileNotFoundError:
            raise NotFound("image file missing") from None
        response = FileResponse(handle, content_type=asset.content_type)
        response["Cache-Control"] = "private, max-age=31536000, immutable"
        return response
