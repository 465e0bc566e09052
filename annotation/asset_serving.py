"""An image by the SHA-256 of its bytes, served the same way to the pages (`asset-file`) and to
the API (`api-asset`): only to users who may see a pair showing it, cleaned of its metadata
(content.image_cleaning; the cleaned copy is made on first request), streamed from
media storage (the local disk or the S3 bucket) in chunks: the bucket is never public."""

import re

from django.http import FileResponse

from annotation.selectors import asset_for_user
from content.image_cleaning import clean_asset_response

_SHA256 = re.compile(r"^[0-9a-f]{64}$")


def asset_response(user, sha256: str) -> FileResponse | None:
    """The cleaned image, cached privately for good (its name is its content); None when the
    hash is malformed, unknown, out of the user's scope, or its image cannot be shown. The
    views answer all of these with the same 404: a hash is no capability. Costs the scope
    query, then the asset's."""
    asset = asset_for_user(user, sha256) if _SHA256.match(sha256) else None
    if asset is None:
        return None
    response = clean_asset_response(asset.sha256, asset.file.name, asset.content_type)
    if response is None:
        return None
    response["Cache-Control"] = "private, max-age=31536000, immutable"
    return response
