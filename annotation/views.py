from django.contrib.auth.decorators import login_required
from django.http import FileResponse, Http404
from django.shortcuts import get_object_or_404, render

from annotation.models import Asset
from annotation.selectors import memberships_for_user


@login_required
def home(request):
    return render(request, "home.html", {"memberships": memberships_for_user(request.user)})


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
