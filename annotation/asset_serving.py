"""An image by the SHA-256 of its bytes, served the same way to the pages (`asset-file`) and to
the API (`api-asset`): only to users who may see a pair showing it, cleaned of its metadata
(content.image_cleaning; the cleaned copy is made on first request), streamed from
media storage (the local disk or the S3 bucket) in chunks: the bucket is never public.

Its thumbnail (`asset-thumbnail`, the lists of pairs) answers to exactly the same users:
both go through `_asset_in_scope`, the one access rule, and both answer None for everything
else, which the views turn into the same 404."""

import re

from django.http import FileResponse

from annotation.selectors.assets import asset_for_user
from content.image_cleaning import clean_asset_response
from content.models import Asset
from content.thumbnails import ThumbnailUnavailable, thumbnail_response

_SHA256 = re.compile(r"^[0-9a-f]{64}$")
_FOR_GOOD = "private, max-age=31536000, immutable"  # its name is its content


def _asset_in_scope(user, sha256: str) -> Asset | None:
    """The asset if the user may see a pair showing it; None when the hash is malformed,
    unknown or out of the user's scope, or the user is signed out. A hash is no capability:
    the scope is checked before the asset is read, so an image out of scope costs the same
    work as one that does not exist (annotation.selectors.asset_for_user). Costs the scope
    query, then the asset's; nothing for a signed-out user or a malformed hash."""
    if not user.is_authenticated or not _SHA256.match(sha256):
        return None
    return asset_for_user(user, sha256)


def asset_response(user, sha256: str) -> FileResponse | None:
    """The cleaned image, cached privately for good; None when it is not in the user's scope
    (`_asset_in_scope`) or cannot be shown."""
    asset = _asset_in_scope(user, sha256)
    if asset is None:
        return None
    response = clean_asset_response(asset.sha256, asset.file.name, asset.content_type)
    if response is None:
        return None
    response["Cache-Control"] = _FOR_GOOD
    return response


def asset_thumbnail_response(user, sha256: str) -> FileResponse | None:
    """The image's thumbnail (content.thumbnails: WebP within 96 px, made once and stored),
    cached privately for good; None exactly when `asset_response` would be, and also when
    the image does not decode."""
    asset = _asset_in_scope(user, sha256)
    if asset is None:
        return None
    try:
        response = thumbnail_response(asset.sha256, asset.file.name)
    except ThumbnailUnavailable:
        return None
    response["Cache-Control"] = _FOR_GOOD
    return response
