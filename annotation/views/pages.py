from django.contrib.auth.decorators import login_required
from django.http import Http404
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _

from annotation.asset_serving import asset_response
from annotation.selectors.progress import annotator_progress
from annotation.selectors.quotas import quota_room
from projects.access import tasks_for_membership
from projects.selectors import may_create_projects, memberships_for_user


@login_required
def home(request):
    """The user's projects and, per task they may annotate, their progress."""
    now = timezone.now()
    projects = []
    for membership in memberships_for_user(request.user):
        tasks = tasks_for_membership(membership)
        for task in tasks:
            task.project = membership.project  # no query per task in the template
        room = quota_room(request.user, membership, tasks, now)
        projects.append((membership, annotator_progress(request.user, tasks, now, quota_room=room)))
    context = {"projects": projects, "can_create_projects": may_create_projects(request.user)}
    return render(request, "home.html", context)


@login_required
def asset_file(request, sha256: str):
    """An image by content hash, to users who may see a pair that shows it
    (annotation/asset_serving.py)."""
    response = asset_response(request.user, sha256)
    if response is None:
        raise Http404(_("no such image"))
    return response
