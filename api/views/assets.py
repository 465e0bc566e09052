"""Images by content hash (annotation/asset_serving.py, shared with the pages)."""

from drf_spectacular.types import OpenApiTypes
from drf_spectacular.utils import extend_schema
from rest_framework.exceptions import NotFound
from rest_framework.views import APIView

from annotation.asset_serving import asset_response


class AssetView(APIView):
    @extend_schema(
        summary="An image by the SHA-256 of its bytes, with its real content type and without "
        "its metadata (EXIF, XMP, PNG text, C2PA); only for users who may see a pair showing it",
        responses={(200, "image/*"): OpenApiTypes.BINARY},
    )
    def get(self, request, sha256):
        # Out of scope answers exactly like a hash that does not exist.
        response = asset_response(request.user, sha256)
        if response is None:
            raise NotFound("no such image")
        return response
