"""The expert's own page: their work in one project of theirs, for them alone.

It lives with the dashboards because it reads the hours page's computation
(dashboards.selectors.hours), which the annotation app, below the dashboards in the layers,
may not import."""

from django.contrib.auth.decorators import login_required
from django.http import Http404, HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from dashboards.selectors.own_work import own_membership, own_work_figures
from projects.access import signed_in


@login_required
def own_work_page(request: HttpRequest, slug: str) -> HttpResponse:
    """The signed-in user's own figures in a project they are a member of (any role). Any
    other slug, an existing project included, is the 404 of a project that does not exist."""
    membership = own_membership(request.user, slug)
    if membership is None:
        raise Http404(_("no such project"))
    project = membership.project
    figures = own_work_figures(project, signed_in(request.user), now=timezone.now())
    return render(
        request,
        "dashboards/own_work.html",
        {"project": project, "membership": membership, **figures},
    )
