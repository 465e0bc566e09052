"""Judges (a project's leads change its judges and run the operator's; 403 for anyone who
leads no project), connections, runs and verdicts (the leads of their projects; 404 for
anyone else)."""

from django.db.models import Q
from drf_spectacular.utils import OpenApiResponse, extend_schema, extend_schema_view
from rest_framework import mixins, status
from rest_framework.decorators import action, api_view
from rest_framework.exceptions import NotFound, PermissionDenied, ValidationError
from rest_framework.parsers import FormParser
from rest_framework.response import Response

from api.parsers import MultiPartParser
from api.selectors import judges_for, lead_runs, lead_templates, lead_verdicts, task_in_project
from api.serializers.common import ErrorSerializer
from api.serializers.judging import (
    ConnectionSerializer,
    JudgeInputSerializer,
    JudgeSerializer,
    RunDetailSerializer,
    RunFilterSerializer,
    RunProgressSerializer,
    RunSerializer,
    RunStartSerializer,
    TemplateFilterSerializer,
    TemplateInputSerializer,
    TemplateSerializer,
    VerdictDetailSerializer,
    VerdictFilterSerializer,
    VerdictImportSerializer,
    VerdictImportSummarySerializer,
    VerdictSerializer,
    progress_payload,
)
from api.views.common import ScopedViewSet, filter_by_project, project_or_404, uploaded_to_path
from judging.models import Connection, Judge, PromptTemplate
from judging.prompts import template_save
from judging.selectors import connections_for, judge_changeable_by, run_progress
from judging.services.judges import judge_delete, judge_save
from judging.services.runs import judge_run_cancel, judge_run_resume, judge_run_start
from judging.services.score_import import scores_import
from judging.services.verdict_import import verdicts_import
from projects.access import led_projects

CONFLICT = OpenApiResponse(ErrorSerializer, description="Not in this state.")
NOT_FOUND = OpenApiResponse(
    ErrorSerializer, description="No project you lead (or judge) by this id."
)


FORBIDDEN = OpenApiResponse(ErrorSerializer, description="The operator's judge: run only.")


@extend_schema_view(
    list=extend_schema(
        summary="The judges of the projects you lead, and the operator's (project null)"
    ),
    retrieve=extend_schema(summary="One judge"),
    create=extend_schema(
        summary="Add a judge to a project you lead",
        request=JudgeInputSerializer,
        responses={201: JudgeSerializer, 404: NOT_FOUND},
    ),
    partial_update=extend_schema(
        summary="Change a judge's settings (its name and project stay)",
        request=JudgeInputSerializer,
        responses={200: JudgeSerializer, 403: FORBIDDEN},
    ),
    destroy=extend_schema(
        summary="Delete a judge that has no runs, verdicts or ensemble role",
        responses={204: None, 403: FORBIDDEN, 409: CONFLICT},
    ),
)
class JudgeViewSet(
    mixins.ListModelMixin, mixins.RetrieveModelMixin, mixins.DestroyModelMixin, ScopedViewSet
):
    serializer_class = JudgeSerializer
    http_method_names = ["get", "post", "patch", "delete", "head", "options"]

    def get_queryset(self):
        return judges_for(self.request.user)

    def _changeable(self) -> Judge:
        judge = self.get_object()
        if not judge_changeable_by(self.request.user, judge):
            raise PermissionDenied("the operator's judge: leads run it but cannot change it")
        return judge

    def _save(self, name: str, project, changes: dict):
        if "connection" in changes:
            changes["connection"] = _connection_named(changes["connection"], project)
        judge, _created = judge_save(name, project=project, **changes)
        return judge

    def create(self, request):
        self.get_queryset()  # 403 unless a lead
        serializer = JudgeInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        changes = dict(serializer.validated_data)
        project = project_or_404(led_projects(request.user), changes.pop("project"))
        judge = self._save(changes.pop("name"), project, changes)
        return Response(JudgeSerializer(judge).data, status=status.HTTP_201_CREATED)

    def partial_update(self, request, pk=None):
        judge = self._changeable()
        serializer = JudgeInputSerializer(data=request.data, partial=True, context={"judge": judge})
        serializer.is_valid(raise_exception=True)
        changes = dict(serializer.validated_data)
        changes.pop("name", None)
        ref = changes.pop("project", None)
        if ref is not None and (
            judge.project is None or ref not in (str(judge.project_id), judge.project.slug)
        ):
            raise ValidationError({"project": ["a judge's project cannot change"]})
        return Response(JudgeSerializer(self._save(judge.name, judge.project, changes)).data)

    def destroy(self, request, pk=None):
        judge = self._changeable()
        judge_delete(judge)
        return Response(status=status.HTTP_204_NO_CONTENT)


@extend_schema_view(
    list=extend_schema(
        summary="Prompt template versions of the projects you lead (built-ins are in the code)"
    ),
    retrieve=extend_schema(summary="One template version"),
    create=extend_schema(
        summary="Save a new version of a project's template (unchanged text: the latest one)",
        request=TemplateInputSerializer,
        responses={201: TemplateSerializer, 200: TemplateSerializer, 404: NOT_FOUND},
    ),
)
class TemplateViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = TemplateSerializer
    filter_serializer_class = TemplateFilterSerializer

    def get_queryset(self):
        return lead_templates(self.request.user)

    def list(self, request):
        templates, filters = self.get_queryset(), self.filters()
        templates = filter_by_project(templates, filters.pop("project", None))
        if "name" in filters:
            templates = templates.filter(name=filters["name"])
        return self.paged(templates)

    def create(self, request):
        serializer = TemplateInputSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        project = project_or_404(led_projects(request.user), data["project"])
        latest = PromptTemplate.objects.filter(project=project, name=data["name"]).first()
        saved = template_save(data["name"], data["body"], data["answer_format"], project)
        created = latest is None or saved.pk != latest.pk
        answer = status.HTTP_201_CREATED if created else status.HTTP_200_OK
        return Response(TemplateSerializer(saved).data, status=answer)


def _connection_named(name: str | None, project) -> Connection | None:
    """A connection allowed for the project, by name; any other name is refused with the
    same words, whether it exists for other projects or not at all."""
    if not name:
        return None
    queryset = connections_for(project) if project is not None else Connection.objects.all()
    connection = queryset.filter(name=name).first()
    if connection is None:
        raise ValidationError({"connection": ["no such connection for this project"]})
    return connection


@extend_schema(
    summary="The operator's connections a project you lead may use (name and backend)",
    responses={200: ConnectionSerializer(many=True), 404: NOT_FOUND},
)
@api_view(["GET"])
def project_connections(request, project):
    project = project_or_404(led_projects(request.user), project)
    return Response(ConnectionSerializer(connections_for(project), many=True).data)


def _run_detail(run) -> dict:
    run.progress = progress_payload(run_progress(run))
    return RunDetailSerializer(run).data


@extend_schema_view(
    list=extend_schema(summary="Judge runs of the projects you lead (newest first)"),
    retrieve=extend_schema(
        summary="One run with its progress", responses={200: RunDetailSerializer}
    ),
    create=extend_schema(
        summary="Start a run of a judge over a project's pairs (or one task's), in the background",
        request=RunStartSerializer,
        responses={201: RunDetailSerializer, 404: NOT_FOUND},
    ),
)
class RunViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = RunSerializer
    filter_serializer_class = RunFilterSerializer

    def get_queryset(self):
        return lead_runs(self.request.user)

    def list(self, request):
        runs, filters = self.get_queryset(), self.filters()
        runs = filter_by_project(runs, filters.pop("project", None))
        if "judge" in filters:
            filters["judge_id"] = filters.pop("judge")
        return self.paged(runs.filter(**filters))

    def retrieve(self, request, pk=None):
        return Response(_run_detail(self.get_object()))

    def create(self, request):
        serializer = RunStartSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        project = project_or_404(led_projects(request.user), data["project"])
        judge = (
            judges_for(request.user)
            .filter(Q(project=project) | Q(project__isnull=True), pk=data["judge"])
            .first()
        )
        if judge is None:
            raise NotFound("no such judge")
        task = None
        if data.get("task"):
            task = task_in_project(project, data["task"])
            if task is None:
                raise ValidationError({"task": ["no such task in this project"]})
        run = judge_run_start(  # a run that cannot start: a 400 (RunCannotStart)
            judge,
            project,
            task=task,
            samples=data["samples"],
            user=request.user,
            background=True,
            mode=data["mode"],
        )
        run = self.get_queryset().get(pk=run.pk)
        return Response(_run_detail(run), status=status.HTTP_201_CREATED)

    @extend_schema(summary="The run's progress", responses={200: RunProgressSerializer})
    @action(detail=True, methods=["get"])
    def progress(self, request, pk=None):
        return Response(progress_payload(run_progress(self.get_object())))

    @extend_schema(
        summary="Stop a pending or running run (answers so far stay)",
        request=None,
        responses={200: RunDetailSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def cancel(self, request, pk=None):
        run = judge_run_cancel(self.get_object())
        return Response(_run_detail(run))

    @extend_schema(
        summary="Continue a cancelled run, or retry the failed calls of a finished one",
        request=None,
        responses={200: RunDetailSerializer, 409: CONFLICT},
    )
    @action(detail=True, methods=["post"])
    def resume(self, request, pk=None):
        run = judge_run_resume(self.get_object(), background=True)
        return Response(_run_detail(run))


@extend_schema_view(
    list=extend_schema(summary="Verdicts on the pairs of the projects you lead"),
    retrieve=extend_schema(
        summary="One verdict with the judge's raw output",
        responses={200: VerdictDetailSerializer},
    ),
)
class VerdictViewSet(mixins.ListModelMixin, mixins.RetrieveModelMixin, ScopedViewSet):
    serializer_class = VerdictSerializer
    filter_serializer_class = VerdictFilterSerializer

    def get_queryset(self):
        return lead_verdicts(self.request.user)

    def get_serializer_class(self):
        return VerdictDetailSerializer if self.action == "retrieve" else VerdictSerializer

    def list(self, request):
        verdicts, filters = self.get_queryset(), self.filters()
        verdicts = filter_by_project(verdicts, filters.pop("project", None), "pair__project")
        if "task" in filters:
            verdicts = verdicts.filter(pair__task__slug=filters["task"])
        if "judge" in filters:
            verdicts = verdicts.filter(judge_id=filters["judge"])
        if "pair" in filters:
            verdicts = verdicts.filter(pair_id=filters["pair"])
        return self.paged(verdicts)

    @extend_schema(
        summary="Import a judge's predictions (an MMRB2 prediction file, or an MJ-Bench "
        "scoring-model result file) on a task of a project you lead (all or nothing)",
        request={"multipart/form-data": VerdictImportSerializer},
        responses={201: VerdictImportSummarySerializer, 404: NOT_FOUND},
    )
    @action(
        detail=False,
        methods=["post"],
        url_path="import",
        parser_classes=[MultiPartParser, FormParser],  # api/parsers.py: errors as JSON
    )
    def import_file(self, request):
        serializer = VerdictImportSerializer(data=request.data)
        serializer.is_valid(raise_exception=True)
        data = serializer.validated_data
        project = project_or_404(led_projects(request.user), data["project"])
        where = {"project_slug": project.slug, "task_slug": data["task"]}
        with uploaded_to_path(data["file"]) as path:
            if data["format"] == "mjbench-scores":
                summary = scores_import(path, judge_name=data["judge"], **where)
            else:
                summary = verdicts_import(
                    path, judge_name=data["judge"], strict_mmrb2=data["strict_mmrb2"], **where
                )
        return Response(summary, status=status.HTTP_201_CREATED)
