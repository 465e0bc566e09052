import re

from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import render
from django.utils import timezone

from annotation.image_cleaning import clean_asset_open
from annotation.selectors import (
    annotator_progress,
    asset_for_user,
    may_create_projects,
    memberships_for_user,
    tasks_for_membership,
)

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


@login_required
def home(request):
    """The user's projects and, per task they may annotate, their progress."""
    now = timezone.now()
    projects = []
    for membership in memberships_for_user(request.user):
        tasks = tasks_for_membership(membership)
        for task in tasks:
            task.project = membership.project  # no query per task in the template
        projects.append((membership, annotator_progress(request.user, tasks, now)))
    context = {"projects": projects, "can_create_projects": may_create_projects(request.user)}
    return render(request, "home.html", context)


@login_required
def asset_file(request, sha256: str):
    """An image by content hash, without its metadata (annotation.image_cleaning; the cleaned
    copy is made on first request), to users who may see a pair that shows it. For anyone
    else it does not exist: a hash is no capability."""
    asset = asset_for_user(request.user, sha256) if _SHA256.match(sha256) else None
    if asset is None:
        raise Http404("no such image")
    handle = clean_asset_open(asset.sha256, asset.file.name)
    if handle is None:
        raise Http404("no such image")
    response = FileResponse(handle, content_type=asset.content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
