"""The audit trail's pages: a project's for its leads (`/projects/<p>/audit/`), the whole
trail for the operator (`/audit/`), each filterable by kind, who and date, paged, and
downloadable as CSV (`?format=csv`, streamed). Anyone else, a project's annotators included,
gets the 404 of a project that does not exist; nothing here writes."""

from urllib.parse import urlencode

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.views.decorators.http import require_GET

from audit.forms import TrailFilterForm
from audit.selectors import CSV_HEADER, TrailFilter, trail_csv_rows, trail_page
from core.csv_cells import csv_stream
from core.whole_numbers import whole_number
from projects.access import led_project_or_404
from projects.models import Project

INVALID = 400
FIELDS = ("kind", "who", "since", "until")


def _query(values: dict[str, str], **changes: str) -> str:
    merged = {**values, **changes}
    return urlencode({key: value for key, value in merged.items() if value})


def _page_number(raw: str) -> int:
    number = whole_number(raw, maximum=1_000_000) if raw else 1
    if number is None or number < 1:
        raise Http404("no such page")
    return number


def _trail(request: HttpRequest, project: Project | None, name: str) -> HttpResponseBase:
    form = TrailFilterForm(request.GET)
    context: dict[str, object] = {"project": project, "form": form, "page": None}
    if not form.is_valid():
        return render(request, "audit/trail.html", context, status=INVALID)
    data = form.cleaned_data
    filters = TrailFilter(
        kind=data["kind"], who=data["who"].strip(), since=data["since"], until=data["until"]
    )
    project_id = project.pk if project is not None else None
    if request.GET.get("format") == "csv":
        response = StreamingHttpResponse(
            csv_stream(CSV_HEADER, trail_csv_rows(project_id, filters)),
            content_type="text/csv; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{name}-audit.csv"'
        return response
    page = trail_page(project_id, filters, _page_number(request.GET.get("page", "")))
    values = {key: request.GET.get(key, "") for key in FIELDS}
    context |= {
        "page": page,
        "csv_query": _query(values, format="csv"),
        "previous_query": _query(values, page=str(page.page - 1)),
        "next_query": _query(values, page=str(page.page + 1)),
    }
    return render(request, "audit/trail.html", context)


@login_required
@require_GET
def project_trail(request: HttpRequest, slug: str) -> HttpResponseBase:
    project = led_project_or_404(request.user, slug)
    return _trail(request, project, project.slug)


@login_required
@require_GET
def operator_trail(request: HttpRequest) -> HttpResponseBase:
    if not request.user.is_superuser:
        raise Http404("no such page")
    return _trail(request, None, "arbiter")
