from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render
from django.utils import timezone

from annotation.models import Asset
from annotation.selectors import annotator_progress, memberships_for_user, tasks_for_membership


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
    return render(request, "home.html", {"projects": projects})


@login_required
def asset_file(request, sha256: str):
    """An image by content hash, served with its real content type."""
    asset = get_object_or_404(Asset, sha256=sha256)
    try:
        handle = asset.file.open("rb")
    except FileNotFoundError:
        raise Http404("image file missing") from None
    response = FileResponse(handle, content_type=asset.content_type)
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
