"""What a judge is sent of a pair: its parts (text, and images cleaned of metadata as
annotators see them), filled into the template, each image fitted to the API's limits for
the request it is in (judging/image_limits.py)."""

import base64
import json
import threading
from collections import Counter
from dataclasses import dataclass

from content.image_cleaning import clean_asset_bytes
from content.image_frames import ImageTooCostly
from content.models import Asset, Pair
from judging.image_limits import LIMITS, TooManyImages, fit_image, needs_fitting
from judging.models import PromptTemplate, Verdict
from judging.prompts import EncodedImage, Message, build_message, build_pointwise_message

# Why a trial's content cannot be sent (it is stored as the trial's error, not retried): an
# image file gone, more images than the API takes, an image that today's limits refuse to
# decode (stored before them).
UNSENDABLE = (OSError, TooManyImages, ImageTooCostly)


@dataclass(frozen=True)
class Trial:
    pair_id: int
    order: str
    sample: int


@dataclass(frozen=True)
class _Image:
    """An image part before it is encoded for a request."""

    sha256: str
    name: str  # in media storage
    media_type: str
    width: int
    height: int


class PairContents:
    """The pairs of a chunk as the judge sees them. A pair's parts, and its images as encoded
    for each side limit, are kept while trials of the pair remain (both orders and all samples
    share them), then dropped: memory holds the pairs in flight, not the chunk."""

    def __init__(self, pairs: list[Pair], trials: list[Trial], backend: str):
        shas = {
            value
            for pair in pairs
            for content in (pair.prompt.content, pair.response_a.content, pair.response_b.content)
            for kind, value in (content or [])
            if kind == "image"
        }
        self.images = {
            sha: _Image(sha, name, f"image/{fmt.lower()}", width, height)
            for sha, name, fmt, width, height in Asset.objects.filter(sha256__in=shas).values_list(
                "sha256", "file", "format", "width", "height"
            )
        }
        self.limits = LIMITS.get(backend)  # None: a baseline, which sends nothing
        self.pairs = {pair.pk: pair for pair in pairs}
        self._uses = Counter(trial.pair_id for trial in trials)
        self._cache: dict[int, tuple] = {}
        self._lock = threading.Lock()

    def _parts(self, content) -> list:
        parts = []
        for kind, value in content or []:
            if kind == "text":
                parts.append(("text", value))
            elif value in self.images:
                parts.append(("image", self.images[value]))
            else:
                parts.append(("text", "[image missing]"))
        return parts

    def _prompt_parts(self, pair: Pair) -> list:
        prompt = pair.prompt
        if prompt.content is None:
            about = json.dumps(prompt.metadata, ensure_ascii=False)
            return [("text", f"(prompt not provided; source {prompt.source}: {about})")]
        return self._parts(prompt.content)

    def _response_parts(self, pair: Pair) -> tuple[list, list]:
        return self._parts(pair.response_a.content), self._parts(pair.response_b.content)

    def _pair_entry(self, pair: Pair) -> tuple[tuple[list, list, list], dict]:
        with self._lock:
            cached = self._cache.get(pair.pk)
        if cached is None:
            cached = ((self._prompt_parts(pair), *self._response_parts(pair)), {})
        with self._lock:
            self._uses[pair.pk] -= 1
            if self._uses[pair.pk] > 0:
                self._cache[pair.pk] = cached
            else:
                self._cache.pop(pair.pk, None)
        return cached

    def messages(
        self, template: PromptTemplate, trial: Trial
    ) -> tuple[list[Message[EncodedImage]], list]:
        """The trial's requests (one for a pairwise trial, one per response, A then B, for a
        pointwise one) and what was changed in their images to fit the API. Blocking (reads
        image files): call through asyncio.to_thread. Raises TooManyImages."""
        parts, encoded = self._pair_entry(self.pairs[trial.pair_id])
        drafts = _drafts(template, trial, *parts)
        adapted: dict[str, dict] = {}
        messages = [self._sendable(draft, encoded, adapted) for draft in drafts]
        return messages, list(adapted.values())

    def request_contents(self, template: PromptTemplate, trial: Trial) -> list[list]:
        """What identifies each of the trial's requests for the response cache, without
        reading any image: texts, and images as (sha256, the side they are fitted to)."""
        pair = self.pairs[trial.pair_id]
        parts = (self._prompt_parts(pair), *self._response_parts(pair))
        return [
            [
                ["text", value]
                if isinstance(value, str)
                else ["image", value.sha256, self._side(draft)]
                for _kind, value in draft.parts
            ]
            for draft in _drafts(template, trial, *parts)
        ]

    def _side(self, draft: Message[_Image]) -> int | None:
        images = sum(1 for kind, _ in draft.parts if kind == "image")
        return None if self.limits is None else self.limits.side_for(images)

    def _sendable(
        self, draft: Message[_Image], encoded: dict, adapted: dict
    ) -> Message[EncodedImage]:
        images = sum(1 for kind, _ in draft.parts if kind == "image")
        if self.limits is not None and images > self.limits.max_images:
            raise TooManyImages(
                f"the request would hold {images} images; the API takes at most "
                f"{self.limits.max_images}"
            )
        max_side = self._side(draft)
        parts: list[tuple[str, str | EncodedImage]] = []
        for kind, value in draft.parts:
            if isinstance(value, str):  # a text; an image is an _Image
                parts.append((kind, value))
                continue
            key = (value.sha256, max_side)
            if key not in encoded:
                encoded[key] = self._encode(value, max_side)
            media_type, data, change = encoded[key]
            if change is not None:
                adapted[value.sha256] = change
            parts.append(("image", (media_type, data)))
        return Message(parts)

    def _encode(self, image: _Image, max_side: int | None) -> tuple[str, str, dict | None]:
        # Cleaned like annotators' copies: metadata often names the generator.
        data, media_type, change = (
            clean_asset_bytes(image.sha256, image.name),
            image.media_type,
            None,
        )
        stored_bytes = len(data)
        # A side limit is known whenever image limits are (_side).
        if self.limits is not None and max_side is not None:
            why = needs_fitting(len(data), media_type, image.width, image.height, max_side,
                                self.limits)  # fmt: skip
            if why is not None:
                fitted = fit_image(data, max_side, self.limits, why)
                data, media_type = fitted.data, fitted.media_type
                change = {
                    "image": image.sha256,
                    "why": why,
                    "stored": {"width": image.width, "height": image.height, "bytes": stored_bytes},
                    "sent": {
                        "width": fitted.width,
                        "height": fitted.height,
                        "bytes": len(fitted.data),
                        "media_type": fitted.media_type,
                    },
                }
        return media_type, base64.b64encode(data).decode(), change


def _drafts(template: PromptTemplate, trial: Trial, prompt_parts, a, b) -> list[Message[_Image]]:
    """The trial's messages with images not yet encoded."""
    if trial.order == Verdict.Order.POINTWISE:
        return [build_pointwise_message(template.body, prompt_parts, side) for side in (a, b)]
    first, second = (a, b) if trial.order == Verdict.Order.FORWARD else (b, a)
    return [build_message(template.body, prompt_parts, first, second)]
