"""What a lead recognises a pair by in a list (the pair browser, the disagreement queue): the
prompt's text, small images of the two responses, the generators' names.

The rows come with their prompt and responses joined (`PREVIEW_RELATED`, no query more); the
images' sizes are read in one query for the whole page, so a page costs one query more
whatever its length. Thumbnails are the scoped thumbnail URLs (`asset-thumbnail`: a small
WebP of twice the shown size, content.thumbnails, not the full image), shown with their
width and height, so the row never jumps as they load."""

from dataclasses import dataclass
from typing import Any

from annotation.selectors.assets import assets_by_sha
from content.thumbnails import THUMBNAIL_PX

PREVIEW_RELATED = ("prompt", "response_a__generator", "response_b__generator")
PROMPT_CHARS = 1000  # the title and accessible name; the cell shows two lines of it
THUMB_PX = THUMBNAIL_PX // 2  # CSS pixels; the served file has twice as many, for 2× screens


@dataclass(frozen=True)
class Thumb:
    side: str  # "A" or "B"
    sha256: str
    width: int
    height: int


@dataclass(frozen=True)
class Preview:
    prompt: str  # "" when the source shipped no prompt text
    thumbs: list[Thumb]
    generator_a: str
    generator_b: str


def _first_text(content: list[list[Any]] | None) -> str:
    for kind, value in content or []:
        if kind == "text" and isinstance(value, str) and value.strip():
            text = " ".join(value.split())
            return text if len(text) <= PROMPT_CHARS else text[: PROMPT_CHARS - 1] + "…"
    return ""


def _first_image(content: list[list[Any]] | None) -> str:
    for kind, value in content or []:
        if kind == "image" and isinstance(value, str):
            return value
    return ""


def _fitted(width: int, height: int) -> tuple[int, int]:
    """The size of an image shrunk to fit a THUMB_PX square (never enlarged)."""
    scale = min(1.0, THUMB_PX / max(width, height, 1))
    return max(1, round(width * scale)), max(1, round(height * scale))


def pair_previews(pairs: list[Any]) -> None:  # Pair rows, given a `preview` attribute
    """Set `pair.preview` on each pair (read with `PREVIEW_RELATED`): one query, the assets of
    the page's first images. An image whose asset is gone has no thumbnail."""
    firsts = {
        pair.pk: (_first_image(pair.response_a.content), _first_image(pair.response_b.content))
        for pair in pairs
    }
    assets = assets_by_sha({sha for both in firsts.values() for sha in both if sha})
    for pair in pairs:
        thumbs = []
        for side, sha in zip(("A", "B"), firsts[pair.pk], strict=True):
            asset = assets.get(sha)
            if asset is not None:
                thumbs.append(Thumb(side, sha, *_fitted(asset.width, asset.height)))
        pair.preview = Preview(
            prompt=_first_text(pair.prompt.content),
            thumbs=thumbs,
            generator_a=pair.response_a.generator.name,
            generator_b=pair.response_b.generator.name,
        )
