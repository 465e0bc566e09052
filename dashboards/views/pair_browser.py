"""The pair browser (`/projects/<p>/pairs/`): find any pair of a project by filter, search and
sort, download the filtered view as CSV, and act on a selection (confirmed first).

Only the project's leads (and the operator) reach it; for annotators and outsiders the
project answers exactly like a missing one (404), and a bulk action only ever reads pairs of
the project in the URL (ids of other pairs change nothing)."""

from urllib.parse import urlencode

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import HttpRequest, HttpResponseRedirect, QueryDict, StreamingHttpResponse
from django.http.response import HttpResponseBase
from django.shortcuts import render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.utils.translation import ngettext, pgettext
from django.views.decorators.http import require_http_methods, require_POST

from annotation.services.pair_bulk import (
    ACTIONS,
    NEEDS_NOTE,
    pair_bulk_apply,
    pair_bulk_preview,
)
from content.models import Pair
from core.csv_cells import csv_stream
from core.errors import Invalid
from core.page_errors import refusal_as_message
from core.whole_numbers import whole_number
from dashboards.selectors.pair_browser import (
    COLUMNS,
    CSV_HEADER,
    FIELDS,
    MAX_QUERY_CHARS,
    PAGE_SIZES,
    SIDES,
    SORT_LABELS,
    BrowserFilters,
    browser_csv_rows,
    browser_filters_parse,
    browser_form,
    browser_page,
    browser_pair_ids,
)
from dashboards.selectors.saved_views import saved_views_for
from dashboards.services.saved_views import (
    MAX_VIEWS_PER_LEAD,
    SavedViewNotFound,
    saved_view_delete,
    saved_view_save,
)
from projects.access import led_project_or_404, signed_in
from projects.models import Project

INVALID = 400


def _filter_query(values: dict[str, str], **changes: str) -> str:
    """The query string of the filter (empty fields left out), with `changes`."""
    merged = {**values, **changes}
    return urlencode({name: value for name, value in merged.items() if value})


@login_required
@require_http_methods(["GET", "POST"])
def pairs_page(request: HttpRequest, slug: str) -> HttpResponseBase:
    """The browser; a post saves or deletes a saved view (`view_action`), then shows the
    browser again."""
    project = led_project_or_404(request.user, slug)
    if request.method == "POST":
        return _saved_view_post(request, project)
    form = browser_form(project, request.GET)
    filters = browser_filters_parse(project, form, request.GET.get("page", ""))
    views = saved_views_for(project, signed_in(request.user))
    if form.errors:
        context = {
            "project": project, "form": form, "page": None, "views": views, **_choices(),
        }  # fmt: skip
        return render(request, "dashboards/pairs.html", context, status=INVALID)
    if request.GET.get("format") == "csv":
        response = StreamingHttpResponse(
            csv_stream(CSV_HEADER, browser_csv_rows(project, filters)),
            content_type="text/csv; charset=utf-8",
        )
        response["Content-Disposition"] = f'attachment; filename="{project.slug}-pairs.csv"'
        return response
    page = browser_page(project, filters)
    values = form.values
    sort_links = {key: _filter_query(values, **_sort(filters, key)) for key in SORT_LABELS}
    query = _filter_query(values)
    context = {
        "project": project,
        "form": form,
        "filters": filters,
        "page": page,
        "columns": set(filters.columns),
        "column_count": len(filters.columns) + 2,
        "views": views,
        "current_view": next((view.pk for view in views if view.query == query), None),
        "query": query,
        "csv_query": _filter_query(values, format="csv"),
        "previous_query": _filter_query(values, page=str(page.page - 1)),
        "next_query": _filter_query(values, page=str(page.page + 1)),
        "sort_links": sort_links,
        **_choices(),
    }
    return render(request, "dashboards/pairs.html", context)


def _sort(filters: BrowserFilters, key: str) -> dict[str, str]:
    """The sort and order of a column's link: the other direction when it is the current
    sort, else ascending."""
    if filters.sort != key:
        return {"sort": key, "order": "", "page": ""}
    return {"sort": key, "order": "asc" if filters.descending else "desc", "page": ""}


def _saved_view_post(request: HttpRequest, project: Project) -> HttpResponseBase:
    """Save the posted filter as a view (back to it, a bad name or filter said in a message), or
    delete one of the lead's own views (another's or another project's: the 404 of a missing
    one)."""
    back = reverse("dash-pairs", args=[project.slug])
    query = _selection_query(request)
    if request.POST.get("view_action") == "delete":
        view_id = whole_number(request.POST.get("view", ""))
        if view_id is None:
            raise SavedViewNotFound(_("No such saved view."))
        name = saved_view_delete(project=project, lead=signed_in(request.user), view_id=view_id)
        messages.success(request, _("Saved view “%(name)s” deleted.") % {"name": name})
        return HttpResponseRedirect(f"{back}?{query}" if query else back)
    with refusal_as_message(request, _("View not saved: ")):
        view = saved_view_save(
            project=project,
            lead=signed_in(request.user),
            name=request.POST.get("name", "")[:1000],
            shared=request.POST.get("shared") == "1",
            query=query,
        )
        query = view.query
        messages.success(request, _("View “%(name)s” saved.") % {"name": view.name})
    return HttpResponseRedirect(f"{back}?{query}" if query else back)


def _choices() -> dict[str, object]:
    return {
        "all_columns": COLUMNS,
        "max_views": MAX_VIEWS_PER_LEAD,
        "statuses": Pair.Status.choices,
        "sides": SIDES,
        "sorts": SORT_LABELS,
        "page_sizes": PAGE_SIZES,
        "actions": ACTIONS,
    }


def _selection_query(request: HttpRequest) -> str:
    """The query string of the filter a bulk form was posted from, re-encoded from the
    filter's own fields: what goes back into a URL is never raw input."""
    params = QueryDict(request.POST.get("filter", "")[:4000])
    return _filter_query({name: params.get(name, "")[:MAX_QUERY_CHARS] for name in FIELDS})


def _selection(request: HttpRequest, project: Project) -> tuple[list[int], str, int | None]:
    """The posted selection: (pair ids, the filter's query string, how many the filter
    matched when "all matching" was chosen, else None). Raises Invalid for a bad id or filter."""
    query = _selection_query(request)
    params = QueryDict(query)
    if request.POST.get("scope") == "all":
        form = browser_form(project, params)
        filters = browser_filters_parse(project, form)
        if form.errors:
            raise Invalid(_("The filter of the selection is not valid: filter the pairs again."))
        ids = browser_pair_ids(project, filters)
        return ids, query, len(ids)
    raw = request.POST.getlist("pair")
    if len(raw) == 1 and "," in raw[0]:  # the confirmation step posts them in one field
        raw = raw[0].split(",")
    typed = [whole_number(value) for value in raw]
    chosen = [pk for pk in typed if pk is not None]
    if len(chosen) != len(typed):
        raise Invalid(_("A selected pair id is not a whole number."))
    return chosen, query, None


@login_required
@require_POST
def pairs_bulk_view(request: HttpRequest, slug: str) -> HttpResponseBase:
    """First post: the confirmation page (how many pairs the action changes, why the others
    stay). With confirm=1: apply, then back to the browser with what changed."""
    lead = signed_in(request.user)
    project = led_project_or_404(lead, slug)
    back = reverse("dash-pairs", args=[slug])
    action = request.POST.get("action", "")
    confirmed = request.POST.get("confirm") == "1"
    query = _selection_query(request)
    back_to_filter = f"{back}?{query}" if query else back
    try:
        ids, query, matched = _selection(request, project)
        preview = (
            None if confirmed else pair_bulk_preview(project=project, action=action, pair_ids=ids)
        )
    except Invalid as error:  # nothing ticked, no action chosen, a bad id or filter
        messages.error(request, _("Nothing changed: %(error)s") % {"error": error.message})
        return HttpResponseRedirect(back_to_filter)
    if preview is not None:
        context = {
            "project": project,
            "preview": preview,
            "selected": len(ids),
            "matched": matched,
            "ids": ",".join(str(pk) for pk in ids) if matched is None else "",
            "filter": query,
            "back": back_to_filter,
            "needs_note": action in NEEDS_NOTE,
        }
        return render(request, "dashboards/pairs_confirm.html", context)
    with refusal_as_message(request, _("Nothing changed: ")):
        result = pair_bulk_apply(
            project=project,
            lead=lead,
            action=action,
            pair_ids=ids,
            note=request.POST.get("note", ""),
        )
        changed = ngettext(
            "%(action)s: %(count)s pair changed",
            "%(action)s: %(count)s pairs changed",
            result.changed,
        ) % {"action": ACTIONS[action], "count": result.changed}
        left = _("; %(count)s left as they were") % {"count": result.left} if result.left else ""
        messages.success(request, changed + left + pgettext("end of a sentence", "."))
    return HttpResponseRedirect(back_to_filter)
