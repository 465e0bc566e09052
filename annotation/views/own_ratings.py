"""The annotator's list of their own ratings in a project, page by page (the annotate page
lists only the latest few). For them alone; blind like the annotate page."""

from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from annotation.selectors.own_ratings import (
    own_membership_of,
    own_rating_tasks,
    own_ratings_page,
)


@login_required
@require_GET
def own_ratings_view(request, slug: str):
    """Any project the user is not a member of, and any task not theirs in it, is a 404 like
    one that does not exist; a page number out of range shows the nearest page."""
    membership = own_membership_of(request.user, slug)
    if membership is None:
        raise Http404(_("no such project"))
    tasks = own_rating_tasks(membership)
    task = None
    wanted = request.GET.get("task", "")
    if wanted:
        task = next((t for t in tasks if t.slug == wanted), None)
        if task is None:
            raise Http404(_("no such task"))
    page, rows = own_ratings_page(
        request.user, membership, request.GET.get("page"), timezone.now(), task=task
    )
    context = {
        "project": membership.project,
        "tasks": tasks,
        "task": task,
        "page": page,
        "rows": rows,
        "grace_minutes": membership.project.edit_grace_minutes,
    }
    return render(request, "annotation/own_ratings.html", context)
