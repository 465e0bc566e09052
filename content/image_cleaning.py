"""Images as annotators, leads' pages and judges receive them: without the metadata that often
names the model that made them (PNG text chunks, EXIF, XMP, C2PA/JUMBF, comments), which would
break the blinding. Exports keep the original bytes; only what is shown or sent is cleaned.

The container is rewritten, never the pixels: an allow-list of the chunks (PNG, WebP),
segments (JPEG) or blocks (GIF) that decoding and colour need, the ICC profile included, is
copied verbatim, and everything else is dropped, as is anything after the image's end. Only an
EXIF orientation other than "upright" forces a decode: the rotation is applied and the image
re-encoded (PNG and lossless WebP stay lossless; JPEG keeps its own quantisation tables),
because a browser would otherwise rotate the original but not its cleaned copy. The cleaned
bytes are checked to decode to the same size; if the container cannot be parsed or the check
fails, a still image is re-encoded by Pillow instead. An animation is never re-encoded (that
decodes and keeps every frame): one whose container cannot be stripped is refused
(ImageTooCostly), on import and when served, and its cleaned copy is bounded again.

Nothing is decoded before the frames and their pixels are bounded from the headers and from
Pillow's own frame count (content.image_frames, the import's limits): cleaning also runs on
images stored before a limit was lowered.

Cleaned copies are cached in media storage under `assets-clean/v<N>/`, keyed by the original's
SHA-256 and written once (atomically on the local disk; one PUT on S3): the check decodes the
image, which costs more than serving it.
"""

import io
import re
from pathlib import Path

from django.conf import settings
from PIL import Image, ImageOps, JpegImagePlugin

from content.image_frames import ImageTooCostly, decoded_size_check, reader_frames
from content.models.prompt import asset_storage_name
from core.media_store import LocalMedia, media_store

CLEAN_VERSION = 1  # bump when the rules change: older cached copies are then ignored
_ORIENTATION = 0x0112


class _Malformed(ValueError):
    pass


def image_bytes_clean(data: bytes) -> tuple[bytes, str]:
    """The image without its metadata, and its media type (the format does not change).
    ImageTooCostly (a ValueError) when decoding it would cost more than the limits allow."""
    with Image.open(io.BytesIO(data)) as image:
        image_format = _saved_as(image.format)
        size = image.size
        _bounded(data, image)
        animated = reader_frames(image) > 1
    strip = _STRIPPERS.get(image_format)
    if strip is None:
        raise ValueError(f"cannot clean {image_format or 'an unknown format'} images")
    try:
        cleaned, orientation = strip(data)
    except _Malformed:
        cleaned, orientation = None, None
    if animated:
        # Never re-encoded: that decodes and keeps every frame, and a container that fails
        # the strip is the kind whose frames the header walk may miscount. Not rotated (rare).
        if cleaned is None or not _decodes(cleaned, size):
            raise ImageTooCostly(
                "an animation whose container cannot be cleaned without decoding every frame"
            )
        with Image.open(io.BytesIO(cleaned)) as image:
            _bounded(cleaned, image)  # what is served is counted too
        return cleaned, f"image/{image_format.lower()}"
    if orientation not in (None, 1) or cleaned is None or not _decodes(cleaned, size):
        cleaned = _reencode(data)
    return cleaned, f"image/{image_format.lower()}"


# -- cached copies in media storage ----------------------------------------------------------


def clean_asset_name(sha256: str, name: str) -> str:
    """The storage name of the cleaned copy of the asset stored as `name`, made on first use
    (FileNotFoundError when the original is gone)."""
    clean_copy_make(sha256, name)
    return _clean_name(sha256, name)


def clean_asset_response(sha256: str, name: str, content_type: str):
    """The cleaned copy streamed from media storage, for serving; None when there is nothing
    to show: the original is gone, or it cannot be cleaned within today's image limits
    (stored before them, or under a higher limit). Both views answer that like a missing
    image. Only cleaned copies are ever served: originals keep their metadata."""
    try:
        return media_store().response(clean_asset_name(sha256, name), content_type=content_type)
    except (FileNotFoundError, ValueError):  # ValueError: ImageTooCostly, an unknown format
        return None


def clean_copy_make(sha256: str, name: str) -> str | None:
    """Make the cleaned copy now (an import does, so that no first view or judge call pays
    for it); its storage name when this call wrote it, None when it existed."""
    clean_name = _clean_name(sha256, name)
    if media_store().exists(clean_name):
        return None
    _clean_copy_write(clean_name, name)
    return clean_name


def clean_asset_bytes(sha256: str, name: str) -> bytes:
    """The cleaned bytes of the asset stored as `name` (for judges' messages and exports),
    made now when missing. On the local disk a plain read (Django's File wrapper costs more
    than the read at hundreds of images per second); on S3 one GET."""
    clean_name = _clean_name(sha256, name)
    try:
        return media_store().read(clean_name)
    except FileNotFoundError:
        return _clean_copy_write(clean_name, name)


def _clean_name(sha256: str, name: str) -> str:
    image_format = Path(name).suffix.lstrip(".").upper()
    prefix = f"assets-clean/v{CLEAN_VERSION}/"
    return asset_storage_name(sha256, image_format).replace("assets/", prefix, 1)


def _clean_copy_write(clean_name: str, name: str) -> bytes:
    store = media_store()
    data = store.read(name)
    cleaned, _media_type = image_bytes_clean(data)
    # Written whole (atomically on the local disk: a temporary file renamed into place, so
    # concurrent first requests never see half a file; on S3 one PUT, and a racing twin
    # writes the same bytes). An image that was already clean is hard-linked on local disk.
    if not (cleaned == data and isinstance(store, LocalMedia) and store.link(name, clean_name)):
        store.put_bytes(clean_name, cleaned)
    return cleaned


# -- checks and the Pillow fallback ------------------------------------------------------------


def _saved_as(image_format: str | None) -> str:
    """The format an image is kept and sent in: a phone's MPO is a JPEG (its first frame)."""
    image_format = (image_format or "").upper()
    return "JPEG" if image_format == "MPO" else image_format


def _bounded(data: bytes, image: Image.Image) -> None:
    decoded_size_check(
        data,
        _saved_as(image.format),
        image.size,
        None,
        max_pixels=settings.ARBITER_MAX_IMAGE_PIXELS,
        max_frames=settings.ARBITER_MAX_IMAGE_FRAMES,
        reader_frames=reader_frames(image),
    )


def _decodes(data: bytes, size: tuple[int, int]) -> bool:
    try:
        with Image.open(io.BytesIO(data)) as image:
            image.load()
            return image.size == size
    except (OSError, SyntaxError, ValueError):
        return False


def _reencode(data: bytes) -> bytes:
    """Orientation applied, pixels re-encoded, and only the ICC profile (and what decoding
    needs) carried over. Still images only (an MPO is its first frame): animations are never
    re-encoded (image_bytes_clean)."""
    with Image.open(io.BytesIO(data)) as image:
        _bounded(data, image)
        image_format = _saved_as(image.format)
        icc = image.info.get("icc_profile")
        transparency = image.info.get("transparency")
        params: dict = {}
        # Saved as JPEG exactly when Pillow read a JpegImageFile (an MPO is one).
        if isinstance(image, JpegImagePlugin.JpegImageFile):
            # The original's tables keep its quality; 4:2:2 does not survive a quarter turn.
            sampling = JpegImagePlugin.get_sampling(image)
            params = {"qtables": image.quantization, "subsampling": 0 if sampling < 0 else sampling}
            if sampling == 1 and image.getexif().get(_ORIENTATION) in (5, 6, 7, 8):
                params["subsampling"] = 0
        elif image_format == "WEBP":
            params = {"lossless": _webp_is_lossless(data), "quality": 95}
        output = ImageOps.exif_transpose(image)
        output.info = {}
        if icc:
            params["icc_profile"] = icc
        if transparency is not None and image_format in ("PNG", "GIF"):
            params["transparency"] = transparency
        buffer = io.BytesIO()
        output.save(buffer, image_format, **params)
    return buffer.getvalue()


def _orientation(exif: bytes) -> int | None:
    try:
        parsed = Image.Exif()
        parsed.load(exif)
        return parsed.get(_ORIENTATION)
    except Exception:
        return None


# -- PNG: chunks -------------------------------------------------------------------------------

_PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"
# Decoding, transparency, colour (iCCP is the ICC profile), physical size and APNG frames.
_PNG_KEEP = {
    b"IHDR", b"PLTE", b"IDAT", b"IEND", b"tRNS", b"cHRM", b"gAMA", b"iCCP", b"sBIT", b"sRGB",
    b"cICP", b"mDCV", b"cLLI", b"bKGD", b"hIST", b"pHYs", b"acTL", b"fcTL", b"fdAT",
}  # fmt: skip


def _png_strip(data: bytes) -> tuple[bytes, int | None]:
    if not data.startswith(_PNG_SIGNATURE):
        raise _Malformed("no PNG signature")
    view = memoryview(data)
    kept: list = [_PNG_SIGNATURE]
    orientation = None
    position = len(_PNG_SIGNATURE)
    while True:
        if position + 12 > len(data):
            raise _Malformed("PNG ends inside a chunk")
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        end = position + 12 + length
        if end > len(data):
            raise _Malformed("PNG chunk longer than the file")
        if kind == b"eXIf" and orientation is None:
            orientation = _orientation(data[position + 8 : end - 4])
        if kind in _PNG_KEEP:
            kept.append(view[position:end])
        position = end
        if kind == b"IEND":
            return b"".join(kept), orientation


# -- JPEG: segments ----------------------------------------------------------------------------

# After a scan header, entropy-coded data runs to the next marker that is neither a stuffed
# 0xFF00, a restart marker nor a fill byte.
_NEXT_MARKER = re.compile(rb"\xff[^\x00\xd0-\xd7\xff]")


def _jpeg_segment_kept(marker: int, payload: bytes) -> bool:
    if marker == 0xE0:  # JFIF (not the JFXX thumbnail extension)
        return payload.startswith(b"JFIF\x00")
    if marker == 0xE2:  # the ICC profile, not MPF (which points at images after the end)
        return payload.startswith(b"ICC_PROFILE\x00")
    if marker == 0xEE:  # Adobe: how to read the colour components
        return payload.startswith(b"Adobe")
    # Other APPn (EXIF and XMP in APP1, C2PA/JUMBF in APP11, IPTC in APP13...) and comments go.
    return not (0xE0 <= marker <= 0xEF or marker == 0xFE)


def _jpeg_strip(data: bytes) -> tuple[bytes, int | None]:
    if not data.startswith(b"\xff\xd8"):
        raise _Malformed("no JPEG start marker")
    view = memoryview(data)
    kept: list = [b"\xff\xd8"]
    orientation = None
    position = 2
    while True:
        if position + 2 > len(data) or data[position] != 0xFF:
            raise _Malformed("JPEG marker expected")
        while position < len(data) and data[position] == 0xFF:  # fill bytes
            position += 1
        if position >= len(data):
            raise _Malformed("JPEG ends inside a marker")
        marker = data[position]
        position += 1
        if marker == 0xD9:  # end of image; whatever follows (MPF images, trailers) is dropped
            kept.append(b"\xff\xd9")
            return b"".join(kept), orientation
        if 0xD0 <= marker <= 0xD7 or marker == 0x01:  # markers without a length
            kept.append(bytes((0xFF, marker)))
            continue
        length = int.from_bytes(data[position : position + 2], "big")
        end = position + length
        if length < 2 or end > len(data):
            raise _Malformed("JPEG segment longer than the file")
        payload = data[position + 2 : end]
        if marker == 0xE1 and payload.startswith(b"Exif\x00\x00") and orientation is None:
            orientation = _orientation(payload)
        if _jpeg_segment_kept(marker, payload):
            kept.append(b"\xff" + bytes((marker,)))
            kept.append(view[position:end])
        position = end
        if marker == 0xDA:  # start of scan: copy its entropy-coded data
            found = _NEXT_MARKER.search(data, position)
            if found is None:
                raise _Malformed("JPEG scan without an end")
            kept.append(view[position : found.start()])
            position = found.start()


# -- WebP: RIFF chunks -------------------------------------------------------------------------

_WEBP_KEEP = {b"VP8 ", b"VP8L", b"VP8X", b"ALPH", b"ANIM", b"ANMF", b"ICCP"}
_VP8X_EXIF_XMP = 0x08 | 0x04


def _webp_strip(data: bytes) -> tuple[bytes, int | None]:
    if len(data) < 12 or data[:4] != b"RIFF" or data[8:12] != b"WEBP":
        raise _Malformed("no RIFF WEBP header")
    riff_end = min(len(data), 8 + int.from_bytes(data[4:8], "little"))
    view = memoryview(data)
    kept: list = []
    orientation = None
    position = 12
    while position + 8 <= riff_end:
        kind = data[position : position + 4]
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        end = position + 8 + size + (size & 1)  # chunks are padded to an even length
        if position + 8 + size > riff_end:
            raise _Malformed("WebP chunk longer than the file")
        if kind == b"EXIF" and orientation is None:
            orientation = _orientation(data[position + 8 : position + 8 + size])
        if kind == b"VP8X":
            flags = bytes((data[position + 8] & ~_VP8X_EXIF_XMP & 0xFF,))
            kept.append(data[position : position + 8] + flags)
            kept.append(view[position + 9 : min(end, riff_end)])
        elif kind in _WEBP_KEEP:
            kept.append(view[position : min(end, riff_end)])
        position = end
    body = b"".join(kept)
    return b"RIFF" + (4 + len(body)).to_bytes(4, "little") + b"WEBP" + body, orientation


# -- GIF: blocks -------------------------------------------------------------------------------

# Looping (NETSCAPE2.0, ANIMEXTS1.0) and the ICC profile; XMP and other applications go.
_GIF_APPLICATIONS_KEPT = {b"NETSCAPE2.0", b"ANIMEXTS1.0", b"ICCRGBG1012"}


def _gif_sub_blocks_end(data: bytes, position: int) -> int:
    while True:
        if position >= len(data):
            raise _Malformed("GIF ends inside a block")
        size = data[position]
        position += 1 + size
        if size == 0:
            return position


def _gif_strip(data: bytes) -> tuple[bytes, None]:
    if len(data) < 13 or data[:6] not in (b"GIF87a", b"GIF89a"):
        raise _Malformed("no GIF header")
    view = memoryview(data)
    packed = data[10]
    position = 13 + (3 * 2 ** ((packed & 7) + 1) if packed & 0x80 else 0)
    kept: list = [view[:position]]
    while position < len(data):
        introducer = data[position]
        if introducer == 0x3B:  # trailer
            kept.append(b"\x3b")
            return b"".join(kept), None
        if introducer == 0x2C:  # an image: descriptor, local colour table, LZW data
            if position + 11 > len(data):
                raise _Malformed("GIF ends inside an image descriptor")
            local = data[position + 9]
            start = position + 10 + (3 * 2 ** ((local & 7) + 1) if local & 0x80 else 0)
            end = _gif_sub_blocks_end(data, start + 1)  # +1: the LZW minimum code size
            kept.append(view[position:end])
        elif introducer == 0x21 and position + 2 < len(data):
            label = data[position + 1]
            end = _gif_sub_blocks_end(data, position + 2)
            application = data[position + 3 : position + 3 + data[position + 2]]
            # Graphic control (timing, transparency) stays; comments and plain text go.
            if label == 0xF9 or (label == 0xFF and application in _GIF_APPLICATIONS_KEPT):
                kept.append(view[position:end])
        else:
            raise _Malformed("unknown GIF block")
        position = end
    raise _Malformed("GIF without a trailer")


def _webp_is_lossless(data: bytes) -> bool:
    position = 12
    while position + 8 <= len(data):
        kind = data[position : position + 4]
        if kind in (b"VP8L", b"VP8 "):
            return kind == b"VP8L"
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        position += 8 + size + (size & 1)
    return False


_STRIPPERS = {"PNG": _png_strip, "JPEG": _jpeg_strip, "WEBP": _webp_strip, "GIF": _gif_strip}
