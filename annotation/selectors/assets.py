"""Images: the assets a content names, and whether an image may be shown to a user."""

from typing import TypeVar

from django.db import connection
from django.db.models import Q, QuerySet, TextField
from django.db.models.functions import Cast

from annotation.access import pairs_showing_images_to
from content.models import Asset, Prompt, Response
from content.rendering import image_shas
from projects.access import AnyUser, operator_wide

# A model whose `content` is a part list.
PartsModel = TypeVar("PartsModel", Prompt, Response)


def assets_by_sha(shas: set[str]) -> dict[str, Asset]:
    if not shas:
        return {}
    return {asset.sha256: asset for asset in Asset.objects.filter(sha256__in=shas)}


def _naming_image(model: type[PartsModel], sha256: str) -> QuerySet[PartsModel]:
    """Prompts or responses whose part list names the image: exactly, by JSON containment,
    where the database has it (PostgreSQL); else a superset, by a match on the JSON's text."""
    if connection.features.supports_json_field_contains:
        return model.objects.filter(content__contains=[["image", sha256]])
    return model.objects.alias(text=Cast("content", TextField())).filter(text__contains=sha256)


def asset_for_user(user: AnyUser, sha256: str) -> Asset | None:
    """The image with this hash if a pair the user may be shown uses it, else None: an image
    out of scope is indistinguishable from one that does not exist, in the answer and in the
    work done. The scope comes first: one query finds the pairs in scope whose prompt or
    responses name the hash, whether or not such an image exists anywhere; the asset row is
    read only once a pair in scope has been confirmed (two queries then, one otherwise).

    Part lists are JSON with no index from image to pair: the prompts and responses naming
    the image are found by one pass over their content (a GIN index on `content` would make
    it a lookup). Each candidate is confirmed part by part, so a text part quoting the hash
    grants nothing."""
    if operator_wide(user):
        return Asset.objects.filter(sha256=sha256).first()
    prompts = _naming_image(Prompt, sha256).values("pk")
    responses = _naming_image(Response, sha256).values("pk")
    contents = ("prompt__content", "response_a__content", "response_b__content")
    candidates = (
        pairs_showing_images_to(user)
        .filter(Q(prompt__in=prompts) | Q(response_a__in=responses) | Q(response_b__in=responses))
        .values_list(*contents)
    )
    for parts in candidates.iterator(chunk_size=50):
        if sha256 in image_shas(*parts):
            return Asset.objects.filter(sha256=sha256).first()
    return None
