"""An image's thumbnail by content hash, for the lists of pairs (annotation/asset_serving.py)."""

from django.http import Http404
from django.utils.translation import gettext as _
from django.views.decorators.http import require_safe

from annotation.asset_serving import asset_thumbnail_response


@require_safe
def asset_thumbnail(request, sha256: str):
    """The thumbnail, to users who may see a pair showing the image. Not behind the login
    redirect: an <img> cannot follow it, so a signed-out browser gets the 404 of a missing
    image, as does everyone out of scope."""
    response = asset_thumbnail_response(request.user, sha256)
    if response is None:
        raise Http404(_("no such image"))
    return response
