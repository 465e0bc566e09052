"""The REST API (README "REST API"); an index of links at /api/, the OpenAPI schema at
/api/schema/, Swagger UI at /api/docs/, ReDoc at /api/redoc/."""

from django.urls import path, re_path
from drf_spectacular.views import SpectacularAPIView, SpectacularRedocView, SpectacularSwaggerView
from rest_framework.routers import SimpleRouter

from api.views import annotate, assets, auth, export, index, judging, members, pairs, projects
from api.views.common import not_found

router = SimpleRouter()
router.register("projects", projects.ProjectViewSet, basename="api-project")
router.register("tasks", projects.TaskViewSet, basename="api-task")
router.register("tasks", annotate.TaskClaimViewSet, basename="api-task-claim")
router.register("assignments", annotate.AssignmentViewSet, basename="api-assignment")
router.register("ratings", annotate.RatingViewSet, basename="api-rating")
router.register("pairs", pairs.PairViewSet, basename="api-pair")
router.register("judges", judging.JudgeViewSet, basename="api-judge")
router.register("runs", judging.RunViewSet, basename="api-run")
router.register("verdicts", judging.VerdictViewSet, basename="api-verdict")
router.register("templates", judging.TemplateViewSet, basename="api-template")

urlpatterns = [
    path("", index.index, name="api-index"),
    path("schema/", SpectacularAPIView.as_view(), name="api-schema"),
    path("docs/", SpectacularSwaggerView.as_view(url_name="api-schema"), name="api-docs"),
    path("redoc/", SpectacularRedocView.as_view(url_name="api-schema"), name="api-redoc"),
    path("redoc/redoc.standalone.js", index.redoc_bundle, name="api-redoc-bundle"),
    path("auth/token/", auth.TokenView.as_view(), name="api-token"),
    re_path(
        r"^projects/(?P<project>[^/]+)/exports/$",
        export.ExportJobListView.as_view(),
        name="api-export-jobs",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/exports/(?P<id>[^/]+)/$",
        export.ExportJobDetailView.as_view(),
        name="api-export-job",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/exports/(?P<id>[^/]+)/download/$",
        export.ExportJobDownloadView.as_view(),
        name="api-export-download",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/connections/$",
        judging.project_connections,
        name="api-project-connections",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/members/$",
        members.MemberListView.as_view(),
        name="api-members",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/members/(?P<id>[^/]+)/$",
        members.MemberDetailView.as_view(),
        name="api-member",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/leases/$",
        members.LeaseListView.as_view(),
        name="api-leases",
    ),
    re_path(
        r"^projects/(?P<project>[^/]+)/leases/(?P<id>[^/]+)/release/$",
        members.LeaseReleaseView.as_view(),
        name="api-lease-release",
    ),
    re_path(r"^assets/(?P<sha256>[^/]+)/$", assets.AssetView.as_view(), name="api-asset"),
    *router.urls,
    re_path(r"", not_found),  # any other /api/ path: a JSON 404
]
