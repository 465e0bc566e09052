from django.urls import path

from annotation.views import annotate, imports, pages, setup

urlpatterns = [
    path("", pages.home, name="home"),
    path("assets/<str:sha256>", pages.asset_file, name="asset-file"),
    path(
        "projects/<slug:project_slug>/tasks/<slug:task_slug>/next/",
        annotate.task_next,
        name="task-next",
    ),
    path("annotate/<int:assignment_id>/", annotate.annotate, name="annotate"),
    # The lead's setup and data pages.
    path("projects/new/", setup.project_new, name="project-new"),
    path("projects/<slug:slug>/settings/", setup.project_settings, name="project-settings"),
    path("projects/<slug:slug>/settings/tasks/new/", setup.task_edit, name="task-new"),
    path(
        "projects/<slug:slug>/settings/tasks/<slug:task_slug>/",
        setup.task_edit,
        name="task-edit",
    ),
    path(
        "projects/<slug:slug>/settings/guidelines-preview/",
        setup.guidelines_preview,
        name="guidelines-preview",
    ),
    path("projects/<slug:slug>/data/", imports.data_page, name="project-data"),
    path("projects/<slug:slug>/data/queue/", imports.queue_view, name="project-queue"),
]
