from django.urls import path

from judging import views

urlpatterns = [
    path("projects/<slug:slug>/settings/judges/", views.judge_list, name="judge-list"),
    path("projects/<slug:slug>/settings/judges/new/", views.judge_edit, name="judge-new"),
    path(
        "projects/<slug:slug>/settings/judges/<int:judge_id>/", views.judge_edit, name="judge-edit"
    ),
    path(
        "projects/<slug:slug>/settings/judges/<int:judge_id>/test-call/",
        views.judge_test_call,
        name="judge-test-call",
    ),
    path(
        "projects/<slug:slug>/settings/judges/<int:judge_id>/delete/",
        views.judge_remove,
        name="judge-delete",
    ),
    path("projects/<slug:slug>/settings/templates/", views.template_list, name="template-list"),
    path("projects/<slug:slug>/settings/templates/new/", views.template_edit, name="template-new"),
    path(
        "projects/<slug:slug>/settings/templates/<slug:name>/",
        views.template_edit,
        name="template-edit",
    ),
    path("projects/<slug:slug>/runs/", views.run_list, name="run-list"),
    path("projects/<slug:slug>/runs/<int:run_id>/", views.run_detail, name="run-detail"),
    path(
        "projects/<slug:slug>/runs/<int:run_id>/cancel/",
        views.run_control,
        {"action": "cancel"},
        name="run-cancel",
    ),
    path(
        "projects/<slug:slug>/runs/<int:run_id>/resume/",
        views.run_control,
        {"action": "resume"},
        name="run-resume",
    ),
    path("projects/<slug:slug>/ensemble/", views.ensemble, name="ensemble"),
    path("projects/<slug:slug>/settings/sampling/", views.sampling, name="project-sampling"),
]
