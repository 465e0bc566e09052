from django.urls import path

from dashboards import views
from dashboards.views import pair_browser
from dashboards.views.annotator import annotator_page, annotator_pause_view
from dashboards.views.own_work import own_work_page

urlpatterns = [
    path("projects/<slug:slug>/", views.overview_page, name="dash-overview"),
    path("projects/<slug:slug>/agreement/", views.agreement_page, name="dash-agreement"),
    path(
        "projects/<slug:slug>/disagreements/",
        views.disagreements_page,
        name="dash-disagreements",
    ),
    path(
        "projects/<slug:slug>/disagreements/settings/",
        views.filter_settings_view,
        name="dash-filter-settings",
    ),
    path("projects/<slug:slug>/pairs/", pair_browser.pairs_page, name="dash-pairs"),
    path("projects/<slug:slug>/pairs/bulk/", pair_browser.pairs_bulk_view, name="dash-pairs-bulk"),
    path("projects/<slug:slug>/pairs/<int:pair_id>/", views.pair_page, name="dash-pair"),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/decide/",
        views.pair_decide_view,
        name="dash-pair-decide",
    ),
    path(
        "projects/<slug:slug>/tasks/<slug:task_slug>/pause/<int:user_id>/",
        annotator_pause_view,
        name="dash-pause",
    ),
    path(
        "projects/<slug:slug>/tasks/<slug:task_slug>/readmit/<int:annotator_id>/",
        views.readmit_view,
        name="dash-readmit",
    ),
    path(
        "projects/<slug:slug>/pairs/<int:pair_id>/gold/",
        views.pair_gold_view,
        name="dash-pair-gold",
    ),
    path("projects/<slug:slug>/judges/", views.judges_page, name="dash-judges"),
    path("projects/<slug:slug>/models/", views.models_page, name="dash-models"),
    path("projects/<slug:slug>/hours/", views.hours_page, name="dash-hours"),
    path(
        "projects/<slug:slug>/annotators/<int:user_id>/",
        annotator_page,
        name="dash-annotator",
    ),
    # The expert's own page (any member, about themselves only): dashboards/views/own_work.py.
    path("projects/<slug:slug>/me/", own_work_page, name="own-work"),
    path("projects/<slug:slug>/exports/", views.exports_page, name="dash-exports"),
    path(
        "projects/<slug:slug>/exports/start/",
        views.export_start_view,
        name="dash-export-start",
    ),
    path(
        "projects/<slug:slug>/exports/<int:job_id>/download/",
        views.export_download_view,
        name="dash-export-download",
    ),
]
