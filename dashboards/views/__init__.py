"""The lead's dashboards: thin views over the selectors (the heavy pages' figures precomputed),
the adjudication services and the dataset exports."""

from collections.abc import Callable
from dataclasses import replace
from typing import Any

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, QueryDict
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.gold.qualification import qualification_admit
from annotation.gold.services import GoldEntry, annotator_readmit, gold_set, gold_unset
from annotation.services.adjudication import (
    pair_adjudicate,
    pair_request_annotator,
    project_filter_update,
)
from content.models import Pair
from core.htmx import render_fragment_or_page
from core.page_errors import refusal_as_message
from core.whole_numbers import whole_number
from dashboards.csv import csv_response, wants_csv
from dashboards.selectors.disagreements import (
    STATES,
    UNDECIDED,
    disagreements,
    pair_review,
    queue_filter_parse,
    queue_following,
    queue_neighbours,
)
from dashboards.selectors.hours import annotator_hours, hours_csv_rows
from dashboards.selectors.overview import overview
from dashboards.snapshots import figures_context, figures_for, stored_judge_figures
from dashboards.tables import TABLES
from exports.errors import ExportInvalid
from exports.jobs import export_job_response, export_job_start
from exports.selectors import export_jobs_for_project
from projects.access import project_for_lead, signed_in
from projects.models import Project, Task

EXPORTS_SHOWN = 50  # the latest; older exports stay downloadable through the API


def _page(
    request: HttpRequest,
    slug: str,
    template: str,
    context: Callable[[Project], dict[str, Any]],
) -> HttpResponseBase:
    """A dashboard page, or with ?format=csv&table=NAME one of its tables (dashboards/tables.py)."""
    project = project_for_lead(request.user, slug)
    page = template.removeprefix("dashboards/").removesuffix(".html")
    tables = TABLES.get(page, {})
    figures = context(project)
    if figures.get("figures_computing"):  # the first figures are on their way
        answer = render(request, "dashboards/computing.html", {"project": project, "tab": page})
        answer["Retry-After"] = "5"
        return answer
    if wants_csv(request):
        name = request.GET.get("table", "")
        if name not in tables:
            raise Http404("no such table")
        header, rows = tables[name][1](figures)
        return csv_response(f"{project.slug}-{page}-{name}.csv", header, rows)
    links = []
    for name, (label, _rows) in tables.items():
        query = request.GET.copy()
        query["format"], query["table"] = "csv", name
        links.append((f"?{query.urlencode()}", label))
    return render(request, template, {"project": project, "csv_tables": links, **figures})


def _overview(project: Project) -> dict[str, Any]:
    # The planner as the judges page last computed it: the overview computes no heavy figure.
    judges = stored_judge_figures(project)
    figures = overview(project)
    return {
        **figures,
        "export_tasks": [row["task"] for row in figures["by_task"]],
        "export_has_archived": any(row["task"].archived_at for row in figures["by_task"]),
        "planner": judges.planner if judges else None,
        "planner_target": judges.target_half_width if judges else None,
    }


@login_required
def overview_page(request: HttpRequest, slug: str) -> HttpResponseBase:
    return _page(request, slug, "dashboards/overview.html", _overview)


def _snapshot_page(name: str) -> Callable[..., HttpResponseBase]:
    """A view of figures precomputed per version of the project's data (dashboards/snapshots.py);
    `figures_as_of` tells the template how current they are."""

    def context(project: Project) -> dict[str, Any]:
        found = figures_for(project, name)
        if found.figures is None:
            return {"figures_computing": True}
        return {**figures_context(found.figures), "figures_as_of": found}

    @login_required
    def view(request: HttpRequest, slug: str) -> HttpResponseBase:
        return _page(request, slug, f"dashboards/{name}.html", context)

    view.__name__ = f"{name}_page"
    return view


agreement_page = _snapshot_page("agreement")
judges_page = _snapshot_page("judges")
models_page = _snapshot_page("models")


@login_required
def disagreements_page(request: HttpRequest, slug: str) -> HttpResponseBase:
    page = whole_number(request.GET.get("page", "")) or 1

    def context(project: Project) -> dict[str, Any]:
        queue = queue_filter_parse(project, request.GET)  # QueueFilterInvalid: 400
        return disagreements(
            project, task_slug=queue.task_slug, reason=queue.reason, state=queue.state, page=page
        )

    return _page(request, slug, "dashboards/disagreements.html", context)


@login_required
def pair_page(request: HttpRequest, slug: str, pair_id: int) -> HttpResponseBase:
    project = project_for_lead(request.user, slug)
    review = pair_review(project, pair_id)
    if review is None:
        raise Http404("no such pair in this project")
    queue = queue_filter_parse(project, request.GET)
    neighbours = queue_neighbours(project, pair_id, queue.task_slug, queue.reason, queue.state)
    context = {
        "project": project,
        **review,
        "queue": neighbours,
        "queue_filter": queue,
        "query": queue.query,
    }
    return render(request, "dashboards/pair.html", context)


def _queue_done(state: str) -> str:
    if state == UNDECIDED:
        return _("Done: no undecided pair is left in this queue.")
    return _("No other pair left in this queue (%(state)s).") % {
        "state": str(STATES[state]).lower()
    }


@login_required
@require_POST
def pair_decide_view(request: HttpRequest, slug: str, pair_id: int) -> HttpResponseBase:
    """Decide the pair, or send it to one more annotator; then the next pair of the queue's
    filter opens (the one in the query string when opened from the queue, else the default:
    every undecided pair), or the queue when none is left. A refused decision stays."""
    lead = signed_in(request.user)
    project = project_for_lead(lead, slug)
    pair = Pair.objects.filter(project=project, pk=pair_id).only("external_id").first()
    if pair is None:
        raise Http404("no such pair in this project")
    # Parsed before acting: a bad filter (400) changes nothing.
    queue = queue_filter_parse(project, request.GET)
    done = False
    note = request.POST.get("note", "")
    with refusal_as_message(request):
        if request.POST.get("action") == "annotator":
            pair_request_annotator(pair_id, lead, note)
            messages.success(
                request, _("%(pair)s goes to one more annotator.") % {"pair": pair.external_id}
            )
        else:
            pair_adjudicate(pair_id, lead, request.POST.get("decision", ""), note)
            messages.success(
                request, _("Decision recorded for %(pair)s.") % {"pair": pair.external_id}
            )
        done = True
    if done:
        queue = replace(queue, from_queue=True)  # found elsewhere (the browser): on to the queue
        following = queue_following(project, pair_id, queue)
        if following is None:
            messages.info(request, _queue_done(queue.state))
            query = f"?{queue.list_query}" if queue.list_query else ""
            return redirect(reverse("dash-disagreements", args=[slug]) + query)
        pair_id = following
    query = f"?{queue.query}" if queue.query else ""
    return redirect(reverse("dash-pair", args=[slug, pair_id]) + query)


@login_required
@require_POST
def pair_gold_view(request: HttpRequest, slug: str, pair_id: int) -> HttpResponseBase:
    """Make the pair a gold check with its expected side, or turn it back (action=unset)."""
    lead = signed_in(request.user)
    project = project_for_lead(lead, slug)
    pair = Pair.objects.filter(project=project, pk=pair_id).select_related("task").first()
    if pair is None:
        raise Http404("no such pair in this project")
    with refusal_as_message(request, _("Gold check not changed: ")):
        if request.POST.get("action") == "unset":
            gold_unset(pair)
            messages.success(request, _("The pair is an ordinary pair again."))
        else:
            entry = GoldEntry(
                pair.external_id,
                request.POST.get("side", "").strip().upper(),
                request.POST.get("explanation", "").strip()[:2000],
                qualification=request.POST.get("qualification") == "1",
            )
            gold_set(pair.task, [entry], by=lead)
            messages.success(
                request, _("Gold check set: %(side)s is the expected side.") % {"side": entry.side}
            )
    return redirect("dash-pair", slug=slug, pair_id=pair_id)


@login_required
@require_POST
def readmit_view(
    request: HttpRequest, slug: str, task_slug: str, annotator_id: int
) -> HttpResponseBase:
    """Let an annotator held back by gold checks or the qualification back into the task."""
    lead = signed_in(request.user)
    project = project_for_lead(lead, slug)
    task = Task.objects.filter(project=project, slug=task_slug).first()
    if task is None:
        raise Http404("no such task in this project")
    unpaused = annotator_readmit(task, annotator_id, by=lead)
    if qualification_admit(task, annotator_id, by=lead) or unpaused:
        messages.success(request, _("Re-admitted: the annotator's queue is open again."))
    else:
        messages.info(request, _("Nobody was paused there."))
    if request.POST.get("back") == "annotator":  # the form of the annotator's page
        return redirect(f"{reverse('dash-annotator', args=[slug, annotator_id])}#quality")
    return redirect(f"{reverse('dash-agreement', args=[slug])}#quality-{task.slug}")


@login_required
@require_POST
def filter_settings_view(request: HttpRequest, slug: str) -> HttpResponseBase:
    project = project_for_lead(request.user, slug)
    with refusal_as_message(request, _("Settings not changed: ")):
        changed = project_filter_update(  # checks the posted text (FilterInvalid)
            project,
            max_span=request.POST.get("max_span", ""),
            ambiguous_half_width=request.POST.get("ambiguous_half_width", ""),
        )
        messages.success(
            request, _("Filter re-applied: %(count)s pairs changed status.") % {"count": changed}
        )
    return redirect("dash-disagreements", slug=slug)


_TRUE, _FALSE = {"1", "on", "true", "yes"}, {"", "0", "off", "false", "no"}


def _flag(params: QueryDict, name: str) -> bool:
    value = params.get(name, "").strip().lower()
    if value not in _TRUE | _FALSE:
        raise ExportInvalid(
            _("%(name)s must be 1 or 0, not %(value)r") % {"name": name, "value": value}
        )
    return value in _TRUE


@login_required
@require_POST
def export_start_view(request: HttpRequest, slug: str) -> HttpResponseBase:
    """Start a background export (the overview's form), then show the list of exports."""
    project = project_for_lead(request.user, slug)
    task = request.POST.get("task", "")
    with refusal_as_message(request, _("Export refused: ")):
        export_job_start(
            project,
            signed_in(request.user),
            file_format=request.POST.get("format", "jsonl"),
            task_slug=None if task in ("", "all") else task,
            include_dropped=_flag(request.POST, "include_dropped"),
            with_verdicts=_flag(request.POST, "with_verdicts"),
            include_archived=not _flag(request.POST, "without_archived"),
        )
        messages.success(request, _("Export started; it appears below when ready."))
    return redirect("dash-exports", slug=slug)


@login_required
def exports_page(request: HttpRequest, slug: str) -> HttpResponseBase:
    """The project's exports; htmx re-fetches the list while one is queued or running."""
    project = project_for_lead(request.user, slug)
    jobs = list(export_jobs_for_project(project)[:EXPORTS_SHOWN])
    tasks = project.tasks.order_by("slug")  # read by the full page only, once
    context = {
        "project": project,
        "jobs": jobs,
        "active": any(job.active for job in jobs),
        "export_tasks": tasks,
        "export_has_archived": lambda: any(task.archived_at for task in tasks),
    }
    return render_fragment_or_page(
        request, "dashboards/_export_jobs.html", "dashboards/exports.html", context
    )


@login_required
def export_download_view(request: HttpRequest, slug: str, job_id: int) -> HttpResponseBase:
    project = project_for_lead(request.user, slug)
    job = export_jobs_for_project(project).filter(pk=job_id).first()
    response: HttpResponseBase | None = export_job_response(job)  # streamed from media storage
    if response is None:
        raise Http404("no such export, or it is not ready")
    return response


@login_required
def hours_page(request: HttpRequest, slug: str) -> HttpResponseBase:
    """Annotators' active hours per day and in total (CSV with ?format=csv)."""
    project = project_for_lead(request.user, slug)
    figures = annotator_hours(project)
    if wants_csv(request):
        header, rows = hours_csv_rows(figures)
        return csv_response(f"{project.slug}-hours.csv", header, rows)
    return render(request, "dashboards/hours.html", {"project": project, **figures})
