from django.contrib import admin
from django.http import HttpResponse
from django.urls import include, path


def healthz(request):
    return HttpResponse("ok", content_type="text/plain")


urlpatterns = [
    path("healthz", healthz, name="healthz"),
    path("admin/", admin.site.urls),
    path("api/", include("api.urls")),
    path("accounts/", include("django.contrib.auth.urls")),
    path("", include("annotation.urls")),
    path("", include("judging.urls")),
    path("", include("dashboards.urls")),
]
