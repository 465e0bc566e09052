"""Pairs, for the leads of their projects: list with filters, un-blinded detail, bulk import."""

from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action
from rest_framework.exceptions import NotFound
from rest_framework.parsers import FormParser
from rest_framework.response import Response

from api.parsers import MultiPartParser
from api.selectors import lead_pairs, pair_for_lead, parse_id
from api.serializers.common import ErrorSerializer
from api.serializers.pairs import (
    ImportSummarySerializer,
    PairDetailSerializer,
    PairFilterSerializer,
    PairImportSerializer,
    PairSerializer,
    pair_detail_payload,
)
from api.views.common import ScopedViewSet, filter_by_project, project_or_404
from imports.services.pair_upload import pairs_import_upload
from projects.access import led_projects

NO_PROJECT = OpenApiResponse(ErrorSerializer, description="No project you lead by this name.")
_EMPTY_FILTERS = {"label": "", "decided_by": ""}


@extend_schema_view(
    list=extend_schema(summary="Pairs of the projects you lead"),
    retrieve=extend_schema(
        summary="One pair, un-blinded: content with image URLs, models, ratings, decisions",
        responses={200: PairDetailSerializer},
    ),
)
class PairViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = PairSerializer
    filter_serializer_class = PairFilterSerializer

    def get_queryset(self):
        return lead_pairs(self.request.user)

    def list(self, request):
        pairs, filters = self.get_queryset(), self.filters()
        pairs = filter_by_project(pairs, filters.pop("project", None))
        if "task" in filters:
            pairs = pairs.filter(task__slug=filters.pop("task"))
        for field in ("label", "decided_by"):
            if filters.get(field) == "none":
                filters[field] = _EMPTY_FILTERS[field]
        return self.paged(pairs.filter(**filters))

    def retrieve(self, request, pk=None):
        pair_id = parse_id(pk)
        found = pair_for_lead(request.user, pair_id) if pair_id else None
        if found is None:
            raise NotFound()
        pair, assets = found
        pair.detail = pair_detail_payload(pair, assets, request)
        return Response(PairDetailSerializer(pair, context=self.get_serializer_context()).data)

    @extend_schema(
        summary="Import a pair file into a task of a project you lead (all or nothing)",
        request={"multipart/form-data": PairImportSerializer},
        responses={201: ImportSummarySerializer, 404: NO_PROJECT},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[MultiPartParser, FormParser],  # api/parsers.py: errors as JSON
    )
    def import_file(self, request):
        serializer = PairImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        project = project_or_404(led_projects(request.user), data["project"])
        summary = pairs_import_upload(
            data["file"],
            project_slug=project.slug,
            task_slug=data["task"],
            file_format=data["format"],
            as_candidates=data["as_candidates"],
        )
        return Response(summary.as_dict(), status=status.HTTP_201_CREATED)
