"""Small images for the lists that show many pairs (the pair browser, the disagreement queue):
an image fitted within THUMBNAIL_PX × THUMBNAIL_PX (twice the 48 CSS pixels of the rows, for 2×
screens; never enlarged), its first frame only, in sRGB, encoded as WebP without any metadata
(no EXIF, XMP or ICC chunk: the pixels are converted to sRGB instead of carrying a profile).

A thumbnail is made from the cleaned copy (content.image_cleaning), so it shows exactly what the
full view shows (orientation applied), once, and kept in media storage under a name derived from
the original's SHA-256, THUMBNAIL_PX and THUMBNAIL_VERSION; every later request streams the
stored file. Concurrent first requests are safe without a lock: each renders the same bytes
from the same source and writes them whole (a temporary file renamed into place on the local
disk, one PUT on S3), so whichever write lands last, a reader only ever sees a complete file.

Memory stays bounded: the source is decoded from a file (on S3 a scratch copy downloaded a
chunk at a time), its frame's pixels are checked against ARBITER_MAX_IMAGE_PIXELS before
anything is decoded, and a JPEG is decoded already reduced (`thumbnail()` asks the decoder
for a DCT-scaled draft of at least twice the target size). Images were checked at import;
still, an image that fails to decode here has no thumbnail (ThumbnailUnavailable), never an
error page.
"""

import io
import struct
from pathlib import Path

from django.conf import settings
from django.http import FileResponse
from PIL import Image, ImageCms

from content.image_cleaning import clean_asset_name
from content.image_frames import ImageTooCostly
from core.media_store import media_store

THUMBNAIL_PX = 96  # the box a thumbnail fits in, in image pixels
THUMBNAIL_VERSION = 1  # bump when the rendering changes: older stored thumbnails are ignored
THUMBNAIL_TYPE = "image/webp"
_QUALITY = 80
_RESIZABLE = {"L", "LA", "RGB", "RGBA", "CMYK"}  # modes Pillow resamples with a real filter
# What Pillow's decoders raise on damaged or hostile data (DecompressionBombError included).
_DECODE_ERRORS = (
    OSError,
    SyntaxError,
    ValueError,
    TypeError,
    IndexError,
    EOFError,
    struct.error,
    Image.DecompressionBombError,
    ImageCms.PyCMSError,
)


class ThumbnailUnavailable(Exception):
    """The image has no thumbnail: its file is gone, or it cannot be decoded within the limits."""


def thumbnail_name(sha256: str) -> str:
    """The storage name of the thumbnail of the image with this SHA-256."""
    return f"thumbnails/v{THUMBNAIL_VERSION}/{THUMBNAIL_PX}/{sha256[:2]}/{sha256}.webp"


def thumbnail_response(sha256: str, name: str) -> FileResponse:
    """The thumbnail of the asset stored as `name`: streamed from media storage when it was
    made before, else made now, stored, and sent from memory (a few kilobytes).
    ThumbnailUnavailable when there is nothing to show. Errors of the store itself (S3
    unreachable: MediaStoreError) are not the image's fault and propagate."""
    store = media_store()
    stored = thumbnail_name(sha256)
    try:
        return store.response(stored, content_type=THUMBNAIL_TYPE)
    except FileNotFoundError:
        pass
    data = thumbnail_make(sha256, name)
    return FileResponse(io.BytesIO(data), content_type=THUMBNAIL_TYPE)


def thumbnail_make(sha256: str, name: str) -> bytes:
    """Render the thumbnail of the asset stored as `name` and store it (replacing any stored
    copy with the same bytes); its bytes. ThumbnailUnavailable when the original or its
    cleaned copy is gone or cannot be decoded within the limits."""
    store = media_store()
    try:
        source = clean_asset_name(sha256, name)
        with store.local_copy(source) as path:
            data = thumbnail_bytes(path)
    except FileNotFoundError as error:
        raise ThumbnailUnavailable("the image's file is gone") from error
    except _DECODE_ERRORS as error:  # ImageTooCostly is a ValueError
        raise ThumbnailUnavailable(f"the image does not decode: {type(error).__name__}") from error
    store.put_bytes(thumbnail_name(sha256), data)
    return data


def thumbnail_bytes(source: Path | io.BytesIO) -> bytes:
    """The WebP thumbnail of the image in `source` (its first frame). Raises what Pillow
    raises on a damaged file, ImageTooCostly above ARBITER_MAX_IMAGE_PIXELS."""
    with Image.open(source) as image:
        width, height = image.size
        if width * height > settings.ARBITER_MAX_IMAGE_PIXELS:  # read from the header
            raise ImageTooCostly(
                f"{width}×{height} pixels, above the limit of {settings.ARBITER_MAX_IMAGE_PIXELS}"
            )
        icc = image.info.get("icc_profile")
        if image.mode in _RESIZABLE and "transparency" not in image.info:
            # A JPEG is decoded here as a DCT-scaled draft (1/2 … 1/8) of at least twice
            # the box, then resampled: a 1024 px photo decodes to 256 px, not 1024.
            image.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX), Image.Resampling.LANCZOS, 2.0)
            small = image.copy()
        else:
            small = _resizable(image)
            small.thumbnail((THUMBNAIL_PX, THUMBNAIL_PX), Image.Resampling.LANCZOS, 2.0)
    output = _srgb(small, icc)
    output.info = {}  # nothing of the source's metadata may ride along
    buffer = io.BytesIO()
    output.save(buffer, "WEBP", quality=_QUALITY, method=6)
    return buffer.getvalue()


def _resizable(image: Image.Image) -> Image.Image:
    """A palette, 1-bit, 16-bit or single-colour-transparent image in a mode that resamples
    with a filter (a palette image would otherwise be resized by its nearest pixels)."""
    if image.mode.startswith("I"):  # 16-bit grey PNG: scaled to 8 bits, not clipped
        return image.convert("I").point(lambda value: value * (1 / 256)).convert("L")
    transparent = "transparency" in image.info or image.mode in ("PA", "La", "RGBa")
    return image.convert("RGBA" if transparent else "RGB")


_SRGB = ImageCms.createProfile("sRGB")


def _srgb(image: Image.Image, icc: bytes | None) -> Image.Image:
    """RGB or RGBA pixels in sRGB: the source's ICC profile applied (a profile LittleCMS
    refuses leaves the pixels as they are, as a browser without colour management shows
    them)."""
    alpha = image.getchannel("A") if "A" in image.getbands() else None
    if alpha is not None:
        image = image.convert("RGB" if image.mode == "RGBA" else "L")
    converted = None
    if icc:
        try:
            profile = ImageCms.ImageCmsProfile(io.BytesIO(icc))
            converted = ImageCms.profileToProfile(image, profile, _SRGB, outputMode="RGB")
        except (ImageCms.PyCMSError, OSError, ValueError, TypeError):
            converted = None
    rgb = converted if converted is not None else image.convert("RGB")
    if alpha is not None:
        rgb.putalpha(alpha)
    return rgb
