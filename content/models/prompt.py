from django.db import models
from django.db.models import Q


def asset_upload_to(asset: "Asset", filename: str) -> str:
    return asset_storage_name(asset.sha256, asset.format)


def asset_storage_name(sha256: str, image_format: str) -> str:
    """Content-addressed path: the same bytes always land in the same file."""
    extension = {"JPEG": "jpg"}.get(image_format, image_format.lower())
    return f"assets/{sha256[:2]}/{sha256}.{extension}"


class Asset(models.Model):
    """An image stored once, named by the SHA-256 of its bytes."""

    sha256 = models.CharField(max_length=64, unique=True)
    file = models.FileField(upload_to=asset_upload_to, max_length=200)
    format = models.CharField(max_length=8)  # Pillow's name: JPEG, PNG, WEBP, GIF
    width = models.PositiveIntegerField()
    height = models.PositiveIntegerField()
    size_bytes = models.PositiveBigIntegerField()
    created_at = models.DateTimeField(auto_now_add=True)

    class Meta:
        db_table = "annotation_asset"  # kept from before the app split
        constraints = [
            models.CheckConstraint(
                condition=Q(width__gt=0, height__gt=0, size_bytes__gt=0), name="asset_non_empty"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.sha256[:12]} {self.format} {self.width}×{self.height}"

    @property
    def content_type(self) -> str:
        return f"image/{self.format.lower()}"


class Generator(models.Model):
    """The model or agent that produced a response. Never shown to annotators."""

    name = models.CharField(max_length=200, unique=True)

    class Meta:
        db_table = "annotation_generator"  # kept from before the app split

    def __str__(self) -> str:
        return self.name


class Prompt(models.Model):
    """What the generators were asked. `content` is None when the source did not ship it
    (MMRB2's response-only files): the prompt is then known by source and metadata only."""

    project = models.ForeignKey("projects.Project", on_delete=models.CASCADE)
    source = models.CharField(max_length=200, blank=True)
    metadata = models.JSONField(default=dict, blank=True)
    # [["text", str] | ["image", sha256], ...] — MMRB2's part list with assets by hash
    content = models.JSONField(null=True, blank=True)
    fingerprint = models.CharField(max_length=64)

    class Meta:
        db_table = "annotation_prompt"  # kept from before the app split
        constraints = [
            models.UniqueConstraint(
                fields=["project", "fingerprint"], name="prompt_unique_in_project"
            ),
        ]

    def __str__(self) -> str:
        return f"{self.source} {self.metadata}"[:80]

    @property
    def is_available(self) -> bool:
        return self.content is not None


class Response(models.Model):
    generator = models.ForeignKey(Generator, on_delete=models.PROTECT, related_name="responses")
    content = models.JSONField(default=list)  # same part list as Prompt.content
    # Per-response grades that came with the import (MMRB2 reasoning: letters A/B/C).
    imported_grades = models.JSONField(default=list, blank=True)
    # Group attributes of what the response depicts, {attribute: value} (MJ-Bench's bias set:
    # {"age": "old", "gender": "female"}): judges' scores are compared across them.
    groups = models.JSONField(default=dict, blank=True)

    class Meta:
        db_table = "annotation_response"  # kept from before the app split

    def __str__(self) -> str:
        return f"response {self.pk} by {self.generator}"
