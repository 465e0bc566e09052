from django.urls import path

from audit import views

urlpatterns = [
    path("projects/<slug:slug>/audit/", views.project_trail, name="project-audit"),
    path("audit/", views.operator_trail, name="operator-audit"),
]
