"""What each judge API takes of an image, and fitting an image into it.

Arbiter accepts images up to 50 MB and 64 MP on import; the APIs take less. Anthropic's
Messages API: at most 5 MB per image (counted here on the base64 text, so 3.75 MB of image),
8,000 px a side, 2,000 px a side once a request holds more than 20 images, 100 images a
request, JPEG/PNG/GIF/WebP. OpenAI's chat completions: 20 MB per image, JPEG/PNG/GIF/WebP,
500 images a request (it scales large images down itself). An image over a limit is scaled
down and re-encoded for that request only, never in storage, and the verdict records what was
sent (`Verdict.images_adapted`). A request over the image count cannot be fitted: its trial
fails with that reason instead of a provider's 400 on every resume.
"""

import io
from dataclasses import dataclass

from PIL import Image

MB = 1024 * 1024
SENDABLE = frozenset({"image/jpeg", "image/png", "image/gif", "image/webp"})


@dataclass(frozen=True)
class ImageLimits:
    max_bytes: int  # of one image as sent, before base64
    max_side: int  # pixels, width and height
    max_images: int  # in one request
    many: int | None = None  # above this many images in a request ...
    max_side_many: int | None = None  # ... each side is at most this
    media_types: frozenset = SENDABLE

    def side_for(self, images: int) -> int:
        if self.many is not None and self.max_side_many is not None and images > self.many:
            return min(self.max_side, self.max_side_many)
        return self.max_side


LIMITS = {
    "anthropic": ImageLimits(
        max_bytes=5 * MB * 3 // 4, max_side=8000, max_images=100, many=20, max_side_many=2000
    ),  # fmt: skip
    "openai": ImageLimits(max_bytes=20 * MB, max_side=16_384, max_images=500),
}


class TooManyImages(ValueError):
    """The request would hold more images than the API takes."""


@dataclass(frozen=True)
class Fitted:
    data: bytes
    media_type: str
    width: int
    height: int
    why: str


def needs_fitting(size: int, media_type: str, width: int, height: int, max_side: int,
                  limits: ImageLimits) -> str | None:  # fmt: skip
    """Why the image cannot be sent as it is (None: it can)."""
    if max(width, height) > max_side:
        return f"{width}×{height} px is above {max_side} px a side"
    if size > limits.max_bytes:
        return f"{size} bytes is above {limits.max_bytes}"
    if media_type not in limits.media_types:
        return f"{media_type} is not taken"
    return None


def fit_image(data: bytes, max_side: int, limits: ImageLimits, why: str) -> Fitted:
    """The image scaled to `max_side` and re-encoded until it is at most `max_bytes`: in its
    own format when the API takes it (PNG stays lossless while it fits), else JPEG."""
    with Image.open(io.BytesIO(data)) as image:
        image_format = (image.format or "").upper()
        image.seek(0)  # an animation sends its first frame
        frame = image.convert("RGBA" if _has_alpha(image) else "RGB")
    scale = min(1.0, max_side / max(frame.size))
    formats = [image_format] if image_format in ("PNG", "JPEG", "WEBP") else []
    formats += [name for name in ("JPEG", "WEBP") if name not in formats]
    if frame.mode == "RGBA":
        formats = [name for name in formats if name != "JPEG"] or ["PNG"]
    for _attempt in range(12):
        size = (max(1, round(frame.width * scale)), max(1, round(frame.height * scale)))
        resized = frame if size == frame.size else frame.resize(size, Image.Resampling.LANCZOS)
        for name in formats:
            for quality in (90, 80, 70) if name != "PNG" else (None,):
                encoded = _encode(resized, name, quality)
                if len(encoded) <= limits.max_bytes:
                    return Fitted(encoded, f"image/{name.lower()}", *size, why)
        scale *= 0.75
    raise ValueError("the image cannot be made small enough")  # a 1 px image is far below


def _has_alpha(image: Image.Image) -> bool:
    return image.mode in ("RGBA", "LA", "PA") or "transparency" in image.info


def _encode(image: Image.Image, image_format: str, quality: int | None) -> bytes:
    buffer = io.BytesIO()
    if image_format == "PNG":
        image.save(buffer, "PNG", optimize=True)
    else:
        image.save(buffer, image_format, quality=quality)
    return buffer.getvalue()
