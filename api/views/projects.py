"""Projects (their members), tasks (members: annotators see the tasks of their membership) and
the report (leads)."""

from drf_spectacular.utils import OpenApiParameter, extend_schema, extend_schema_view
from rest_framework import mixins
from rest_framework.decorators import action
from rest_framework.response import Response

from api.selectors import visible_tasks
from api.serializers.projects import (
    ProjectSerializer,
    QueuedSerializer,
    QueueSerializer,
    ReportSerializer,
    TaskFilterSerializer,
    TaskSerializer,
)
from api.views.common import ScopedViewSet, filter_by_project, project_or_404
from metrics.report import project_report
from projects.access import led_projects, member_projects, project_roles
from setup.services import pairs_queue

PROJECT_REF = OpenApiParameter(
    "project", str, OpenApiParameter.PATH, description="Project id or slug."
)


@extend_schema_view(
    list=extend_schema(summary="The projects you are a member of (superusers: all)"),
    retrieve=extend_schema(summary="One of your projects", parameters=[PROJECT_REF]),
)
class ProjectViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = ProjectSerializer
    lookup_url_kwarg = "project"

    def get_queryset(self):
        return member_projects(self.request.user).order_by("slug")

    def get_object(self):
        return project_or_404(self.get_queryset(), self.kwargs["project"])

    def get_serializer_context(self):
        return {**super().get_serializer_context(), "roles": project_roles(self.request.user)}

    @extend_schema(
        summary="The project's report (what `manage.py report --json` prints); leads only",
        parameters=[PROJECT_REF],
        responses={200: ReportSerializer},
    )
    @action(detail=True, methods=["get"])
    def report(self, request, project=None):
        found = project_or_404(led_projects(request.user), project)
        return Response(project_report(found))

    @extend_schema(
        summary="Send candidate pairs straight to annotation (the whole project, or `task`); "
        "leads only",
        parameters=[PROJECT_REF],
        request=QueueSerializer,
        responses={200: QueuedSerializer},
    )
    @action(detail=True, methods=["post"])
    def queue(self, request, project=None):
        found = project_or_404(led_projects(request.user), project)
        body = QueueSerializer(data=request.data, context={"project": found})
        body.is_valid(raise_exception=True)
        return Response({"queued": pairs_queue(found, task=body.validated_data.get("task"))})


@extend_schema_view(
    list=extend_schema(summary="Tasks you may see: all of the projects you lead, else those "
                       "your membership lets you annotate"),
    retrieve=extend_schema(summary="One task"),
)  # fmt: skip
class TaskViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = TaskSerializer
    filter_serializer_class = TaskFilterSerializer

    def get_queryset(self):
        return visible_tasks(self.request.user)

    def list(self, request):
        tasks = filter_by_project(self.get_queryset(), self.filters().get("project"))
        return self.paged(tasks)
