from django.urls import path

from setup import views

# The lead's set-up pages: a new project, its settings, its tasks.
urlpatterns = [
    path("projects/new/", views.project_new, name="project-new"),
    path("projects/<slug:slug>/settings/", views.project_settings, name="project-settings"),
    path("projects/<slug:slug>/settings/tasks/new/", views.task_edit, name="task-new"),
    path(
        "projects/<slug:slug>/settings/tasks/<slug:task_slug>/",
        views.task_edit,
        name="task-edit",
    ),
    path(
        "projects/<slug:slug>/settings/tasks/<slug:task_slug>/delete/",
        views.task_delete_view,
        name="task-delete",
    ),
    path(
        "projects/<slug:slug>/settings/tasks/<slug:task_slug>/archive/",
        views.task_archive_view,
        name="task-archive",
    ),
    path(
        "projects/<slug:slug>/settings/tasks/<slug:task_slug>/restore/",
        views.task_restore_view,
        name="task-restore",
    ),
    path(
        "projects/<slug:slug>/settings/guidelines-preview/",
        views.guidelines_preview,
        name="guidelines-preview",
    ),
]
