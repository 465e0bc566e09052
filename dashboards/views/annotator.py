"""An annotator's page for the project's leads: one person's ratings, agreement
with the other experts, speed, gold checks, flags and access, with the pause action (re-admit is
dashboards.views.readmit_view, shared with the agreement page)."""

from django.contrib import messages
from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404, HttpRequest
from django.http.response import HttpResponseBase
from django.shortcuts import redirect, render
from django.urls import reverse
from django.utils.translation import gettext as _
from django.views.decorators.http import require_POST

from annotation.gold.services import PAUSE_REASON_CHARS, annotator_pause
from core.page_errors import refusal_as_message
from core.whole_numbers import whole_number
from dashboards.selectors.annotator import annotator_figures, project_annotator
from projects.access import AnyUser, project_for_lead, signed_in
from projects.models import Project


def _lead_project(user: AnyUser, slug: str) -> Project:
    try:
        return project_for_lead(user, slug)
    except PermissionDenied:
        raise Http404("no such annotator in this project") from None


@login_required
def annotator_page(request: HttpRequest, slug: str, user_id: int) -> HttpResponseBase:
    """404 for anyone but the project's leads (its annotators included: the page is about
    people, so nobody else learns whether an id belongs to the project) and for a user who is
    neither a member nor a former member who rated here."""
    project = _lead_project(request.user, slug)
    annotator = project_annotator(project, user_id)
    if annotator is None:
        raise Http404("no such annotator in this project")
    page = whole_number(request.GET.get("page", "")) or 1
    figures = annotator_figures(project, annotator, page=page)
    context = {"project": project, "pause_reason_chars": PAUSE_REASON_CHARS, **figures}
    return render(request, "dashboards/annotator.html", context)


@login_required
@require_POST
def annotator_pause_view(
    request: HttpRequest, slug: str, task_slug: str, user_id: int
) -> HttpResponseBase:
    """A lead pauses an annotator in one task, saying why; 404 as the page for anyone else."""
    lead = signed_in(request.user)
    project = _lead_project(lead, slug)
    task = project.tasks.filter(slug=task_slug).first()
    if task is None or project_annotator(project, user_id) is None:
        raise Http404("no such annotator in this project")
    with refusal_as_message(request, _("Not paused: ")):
        annotator_pause(task, user_id, by=lead, reason=request.POST.get("reason", ""))
        messages.success(
            request,
            _("Paused in %(task)s: they get no new pair until re-admitted.") % {"task": task.name},
        )
    return redirect(f"{reverse('dash-annotator', args=[slug, user_id])}#quality")
