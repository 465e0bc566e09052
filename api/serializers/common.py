"""Shapes shared by the API: errors, ids, strict inputs, content parts."""

from collections.abc import Mapping

from django.urls import reverse
from rest_framework import serializers

from api.selectors import MAX_ID


class ErrorSerializer(serializers.Serializer):
    detail = serializers.CharField(help_text="What went wrong, for a person.")


class ValidationErrorSerializer(serializers.Serializer):
    """A 400: `{"field": ["message", ...], ...}` per invalid field (`non_field_errors` for the
    whole input), or `{"detail": "message"}` when the request as a whole is refused."""

    detail = serializers.CharField(required=False)


class RefusesUnknownFields(serializers.Serializer):
    """An input whose unknown fields are refused with a 400 naming each, not ignored as DRF
    does; its request schema says so (`additionalProperties: false`, api/schema.py)."""

    def unknown_field_message(self, field: str) -> str:
        return "not a field of this request"

    def validate(self, attrs):
        attrs = super().validate(attrs)
        given = self.initial_data if isinstance(self.initial_data, Mapping) else {}
        unknown = sorted(set(given) - set(self.fields))
        if unknown:
            raise serializers.ValidationError(
                {field: [self.unknown_field_message(field)] for field in unknown}
            )
        return attrs


def id_field(**kwargs) -> serializers.IntegerField:
    return serializers.IntegerField(min_value=1, max_value=MAX_ID, **kwargs)


def ref_field(**kwargs) -> serializers.CharField:
    """A project named by id or slug."""
    return serializers.CharField(max_length=64, help_text="Project id or slug.", **kwargs)


class ImageSerializer(serializers.Serializer):
    sha256 = serializers.CharField()
    url = serializers.URLField(allow_null=True, help_text="null when the image file is missing")
    content_type = serializers.CharField(allow_null=True)
    width = serializers.IntegerField(allow_null=True)
    height = serializers.IntegerField(allow_null=True)


class ContentPartSerializer(serializers.Serializer):
    """One part of a prompt or a response: text (raw, unescaped: escape it when you render
    it) or an image (served by GET /api/assets/{sha256}/)."""

    type = serializers.ChoiceField(choices=["text", "image", "missing-image"])
    text = serializers.CharField(allow_null=True)
    image = ImageSerializer(allow_null=True)


def content_parts(content, assets: dict, request) -> list[dict]:
    """Stored part list ([["text", str] | ["image", sha256], ...]) → API parts."""
    parts: list[dict[str, object]] = []
    for kind, value in content or []:
        if kind == "text":
            parts.append({"type": "text", "text": str(value), "image": None})
            continue
        asset = assets.get(value)
        image = {"sha256": str(value), "url": None, "content_type": None}
        image.update(width=None, height=None)
        if asset is not None:
            url = reverse("api-asset", args=[asset.sha256])
            image.update(
                url=request.build_absolute_uri(url),
                content_type=asset.content_type,
                width=asset.width,
                height=asset.height,
            )
        parts.append({"type": "image" if asset else "missing-image", "text": None, "image": image})
    return parts


class ContentSerializer(serializers.Serializer):
    content = ContentPartSerializer(many=True)


class PromptContentSerializer(serializers.Serializer):
    available = serializers.BooleanField(
        help_text="false when the source shipped no prompt (MMRB2 response-only files)"
    )
    content = ContentPartSerializer(many=True)


class AspectSerializer(serializers.Serializer):
    key = serializers.CharField()
    label = serializers.CharField()  # type: ignore[assignment]  # a declared field; the stubs see Field.label
    help = serializers.CharField(required=False, default="")
