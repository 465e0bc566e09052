"""Views that only refuse, for tests/pages/test_error_pages.py, in front of the site's urls."""

from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.urls import path

from config.urls import urlpatterns as site_urls

HOSTILE = '<script>alert("x")</script> & more'


def denied(request):
    raise PermissionDenied(HOSTILE)


def missing(request):
    raise Http404(HOSTILE)


def broken(request):
    raise ValueError("a bug")


urlpatterns = [
    path("_denied/", denied),
    path("_missing/", missing),
    path("_broken/", broken),
    *site_urls,
]
