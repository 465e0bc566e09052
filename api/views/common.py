"""What every API view shares: id lookups that answer 404 outside the caller's scope, query
filters validated into 400s, uploads written to a temporary file. Services' errors become
HTTP answers in one place, `api/exception_handler.py`."""

import re
import shutil
import tempfile
from contextlib import contextmanager
from pathlib import Path

from django.db.models import QuerySet
from django.http import JsonResponse
from rest_framework.exceptions import NotFound, ValidationError
from rest_framework.serializers import Serializer
from rest_framework.viewsets import GenericViewSet

from api.selectors import by_id_or_slug, parse_id
from projects.models import Project


def object_or_404(queryset: QuerySet, pk_text):
    """The object with this id in the caller's queryset, else 404: an id out of scope
    answers exactly like one that does not exist."""
    pk = parse_id(pk_text)
    found = queryset.filter(pk=pk).first() if pk is not None else None
    if found is None:
        raise NotFound()
    return found


def project_or_404(projects: QuerySet, ref):
    project = by_id_or_slug(projects, str(ref)).first()
    if project is None:
        raise NotFound("no such project")
    return project


def filter_by_project(queryset: QuerySet, ref: str | None, field: str = "project") -> QuerySet:
    """Narrow to one project (id or slug) when the query names one."""
    if not ref:
        return queryset
    return queryset.filter(**{f"{field}__in": by_id_or_slug(Project.objects.all(), ref)})


class ScopedViewSet(GenericViewSet):
    """Ids in URLs are matched loosely and checked here, so a malformed or out-of-range id is
    an ordinary 404 (never a routing miss or a database error). Lists validate their
    filters with `filter_serializer_class` (a 400 with field messages)."""

    lookup_value_regex = "[^/]+"
    filter_serializer_class: type[Serializer]  # set by the viewsets whose lists filter

    def get_object(self):
        found = object_or_404(self.get_queryset(), self.kwargs[self.lookup_url_kwarg or "pk"])
        self.check_object_permissions(self.request, found)
        return found

    def filters(self) -> dict:
        query = self.request.query_params
        serializer = self.filter_serializer_class(data=query)
        # DRF reads an empty value of an optional field (`?task=`) as an absent one, which
        # would widen the list silently; the schema says minLength 1, so it is refused.
        # (`items()`: the stubs say iterating a BindingDict yields fields, not names.)
        empty = [name for name, _ in serializer.fields.items() if "" in query.getlist(name)]
        if empty:
            raise ValidationError({name: ["may not be empty"] for name in empty})
        serializer.is_valid(raise_exception=True)
        return serializer.validated_data

    def paged(self, queryset, serializer_class=None, **context):
        page = self.paginate_queryset(queryset)
        serializer_class = serializer_class or self.get_serializer_class()
        data = serializer_class(page, many=True, context=self.get_serializer_context() | context)
        return self.get_paginated_response(data.data)


@contextmanager
def uploaded_to_path(uploaded):
    """The uploaded file as a path (a temporary copy, under its own base name), for services
    that read files; removed afterwards."""
    folder = Path(tempfile.mkdtemp(prefix="arbiter-upload-"))
    try:
        name = re.sub(r"[^A-Za-z0-9._-]", "_", Path(uploaded.name or "").name)[-100:]
        path = folder / (name.lstrip(".") or "upload")
        with path.open("wb") as out:
            for chunk in uploaded.chunks():
                out.write(chunk)
        yield path
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def not_found(request, *args, **kwargs):
    """Any other /api/ path: a JSON 404 like the API's own."""
    return JsonResponse({"detail": "Not found."}, status=404)
