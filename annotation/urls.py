from django.urls import path

from annotation import views

urlpatterns = [
    path("", views.home, name="home"),
    path("assets/<str:sha256>", views.asset_file, name="asset-file"),
]
