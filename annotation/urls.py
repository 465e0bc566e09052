from django.urls import path

from annotation.views import annotate, pages

urlpatterns = [
    path("", pages.home, name="home"),
    path("assets/<str:sha256>", pages.asset_file, name="asset-file"),
    path(
        "projects/<slug:project_slug>/tasks/<slug:task_slug>/next/",
        annotate.task_next,
        name="task-next",
    ),
    path("annotate/<int:assignment_id>/", annotate.annotate, name="annotate"),
]
