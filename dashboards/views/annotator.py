"""An annotator's page for the project's leads (issue 28): one person's ratings, agreement
with the other experts, speed, gold checks, flags and access, with the re-admit action."""

from django.contrib.auth.decorators import login_required
from django.core.exceptions import PermissionDenied
from django.http import Http404
from django.shortcuts import render

from annotation.selectors import project_for_lead
from core.whole_numbers import whole_number
from dashboards.selectors.annotator import annotator_figures, project_annotator


@login_required
def annotator_page(request, slug: str, user_id: int):
    """404 for anyone but the project's leads (its annotators included: the page is about
    people, so nobody else learns whether an id belongs to the project) and for a user who is
    neither a member nor a former member who rated here."""
    try:
        project = project_for_lead(request.user, slug)
    except PermissionDenied:
        raise Http404("no such annotator in this project") from None
    annotator = project_annotator(project, user_id)
    if annotator is None:
        raise Http404("no such annotator in this project")
    page = whole_number(request.GET.get("page", "")) or 1
    figures = annotator_figures(project, annotator, page=page)
    return render(request, "dashboards/annotator.html", {"project": project, **figures})
