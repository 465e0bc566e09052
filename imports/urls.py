from django.urls import path

from imports import views

# The lead's data page: uploads into a task, their jobs, candidates sent to annotation.
urlpatterns = [
    path("projects/<slug:slug>/data/", views.data_page, name="project-data"),
    path("projects/<slug:slug>/data/queue/", views.queue_view, name="project-queue"),
]
