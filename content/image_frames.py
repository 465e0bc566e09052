"""What decoding an image costs, read from its container's headers before any pixel is decoded:
how many frames it has and the canvas each is decoded to (GIF image descriptors, APNG acTL and
IDAT, WebP ANMF chunks).

Pillow decodes every frame of an animation onto a canvas of the whole image's size, and its
encoders keep all the frames in memory while re-encoding one, so the memory an animation costs
is frames × canvas, whatever the first frame's size (all that `Image.open` reports) says. Six
frames on an 8000×8000 GIF screen, each drawn as a single pixel, fit in a few hundred bytes and
decode to gigabytes. ARBITER_MAX_IMAGE_PIXELS bounds the pixels summed over the frames and
ARBITER_MAX_IMAGE_FRAMES their number; Pillow's own decompression-bomb check sees one frame only.

A GIF is walked as leniently as Pillow reads it (a byte that starts no block is skipped, a
missing trailer is the end); a container crafted so that this walk and Pillow's disagree (a
GIF extension that goes on after its terminator, a WebP frame nested in another) is caught by
the callers passing Pillow's own count (`n_frames`, headers only) as `reader_frames`. This
module decodes nothing.
"""

from dataclasses import dataclass


class ImageTooCostly(ValueError):
    """The image decodes to more frames or pixels than the limits allow (the message names it)."""


@dataclass(frozen=True)
class DecodedSize:
    frames: int
    width: int  # of the canvas each frame is decoded to
    height: int

    @property
    def pixels(self) -> int:
        return self.frames * self.width * self.height


def decoded_size(data: bytes, image_format: str, size: tuple[int, int]) -> DecodedSize:
    """Frames and canvas of an image Pillow identified as `image_format`, of size `size`."""
    if image_format == "GIF":
        return _gif(data)
    if image_format == "PNG":
        return DecodedSize(_apng_frames(data), *size)
    if image_format == "WEBP":
        return DecodedSize(_webp_frames(data), *size)
    return DecodedSize(1, *size)  # JPEG: an MPO's extra frames are never decoded


def reader_frames(image) -> int:
    """The frames Pillow reports for an open image, read from headers without decoding (GIF
    seeks without updating the image, APNG reads acTL, WebP asks libwebp's demuxer); an MPO's
    extra pictures are never decoded."""
    if (image.format or "").upper() == "MPO":
        return 1
    return getattr(image, "n_frames", 1)


def decoded_size_check(
    data: bytes,
    image_format: str,
    size: tuple[int, int],
    name: str | None,
    *,
    max_pixels: int,
    max_frames: int,
    reader_frames: int = 1,
) -> DecodedSize:
    """The image's decoded size, or ImageTooCostly when it is above a limit. `reader_frames`
    is the frame count the decoder itself reports (Pillow's `n_frames`, which reads headers
    only): where a hostile container makes the two walks disagree, the larger count holds."""
    counted = decoded_size(data, image_format, size)
    if reader_frames > counted.frames:
        counted = DecodedSize(reader_frames, counted.width, counted.height)
    image = f"image {name!r}" if name else "the image"
    shape = f"{counted.width}×{counted.height} pixels"
    if counted.frames > max_frames:
        raise ImageTooCostly(
            f"{image} has {counted.frames} frames, above the limit of {max_frames}"
        )
    if counted.frames == 1 and counted.pixels > max_pixels:
        raise ImageTooCostly(
            f"{image} is {shape}, above the decompression-bomb limit of {max_pixels}"
        )
    if counted.pixels > max_pixels:
        raise ImageTooCostly(
            f"{image} is {counted.frames} frames of {shape} ({counted.pixels} pixels "
            f"decoded), above the decompression-bomb limit of {max_pixels} pixels summed over "
            "its frames"
        )
    return counted


# -- GIF ---------------------------------------------------------------------------------------


def _gif_sub_blocks_skip(data: bytes, position: int) -> int:
    """The position after a run of data sub-blocks (or the end of the data)."""
    while position < len(data):
        size = data[position]
        position += 1 + size
        if size == 0:
            break
    return position


def _gif(data: bytes) -> DecodedSize:
    if len(data) < 13:
        return DecodedSize(1, 0, 0)
    width, height = int.from_bytes(data[6:8], "little"), int.from_bytes(data[8:10], "little")
    flags = data[10]
    position = 13 + (3 << ((flags & 7) + 1) if flags & 0x80 else 0)
    frames = 0
    while position < len(data):
        introducer = data[position]
        position += 1
        if introducer == 0x3B:  # trailer
            break
        if introducer == 0x21:  # extension: a label, then sub-blocks
            position = _gif_sub_blocks_skip(data, position + 1)
        elif introducer == 0x2C:  # image descriptor
            descriptor = data[position : position + 9]
            if len(descriptor) < 9:
                break
            left, top, frame_width, frame_height = (
                int.from_bytes(descriptor[i : i + 2], "little") for i in (0, 2, 4, 6)
            )
            # A frame outside the logical screen grows Pillow's canvas to hold it.
            width, height = max(width, left + frame_width), max(height, top + frame_height)
            local = descriptor[8]
            position += 9 + (3 << ((local & 7) + 1) if local & 0x80 else 0)
            position = _gif_sub_blocks_skip(data, position + 1)  # +1: LZW minimum code size
            frames += 1
        # Any other byte is skipped, as Pillow skips it (a stray byte is no end).
    return DecodedSize(max(frames, 1), width, height)


# -- PNG (APNG) --------------------------------------------------------------------------------


def _apng_frames(data: bytes) -> int:
    """Pillow's frame count: acTL's num_frames, plus the IDAT image when it is no frame of the
    animation (it comes before any fcTL). The largest acTL counts, whatever Pillow makes of a
    second one."""
    announced = 0
    frame_control_seen = default_image = False
    position = 8
    while position + 8 <= len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kind = data[position + 4 : position + 8]
        if kind == b"acTL" and length >= 8 and position + 16 <= len(data):
            count = int.from_bytes(data[position + 8 : position + 12], "big")
            if 0 < count <= 0x80000000:  # others Pillow ignores
                announced = max(announced, count)
        elif kind == b"fcTL":
            frame_control_seen = True
        elif kind == b"IDAT" and announced and not frame_control_seen:
            default_image = True
        elif kind == b"IEND":
            break
        position += 12 + length
    return announced + default_image if announced else 1


# -- WebP --------------------------------------------------------------------------------------


def _webp_frames(data: bytes) -> int:
    """ANMF chunks: libwebp decodes no frame that has none (one more partial chunk at the end
    counts too, in doubt)."""
    frames = 0
    position = 12
    while position + 8 <= len(data):
        if data[position : position + 4] == b"ANMF":
            frames += 1
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        position += 8 + size + (size & 1)
    return max(frames, 1)
