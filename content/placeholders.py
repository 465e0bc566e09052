"""Interleaved content as MMRB2's Hugging Face layout writes it: one text with `<image_N>`
placeholders where the images go, and the images in a list beside it. Plain Python.

MMRB2's own converter (`benchmark/build_from_hf.py`) splits the text on `<image_(\\d+)>`,
strips each text piece and drops empty ones, and gives each placeholder the next image in the
list (the number itself is not used); a text without placeholders gets all the images after
it. Arbiter writes placeholders numbered from 1, joined to the text by blank lines, and reads
them by that rule, except that nothing is lost: images left over after the last placeholder
are appended, and a placeholder without an image stays in the text, where MMRB2 drops both."""

import re
from collections.abc import Iterable, Sequence

PLACEHOLDER = re.compile(r"<image_(\d+)>")
_SEPARATOR = "\n\n"

Part = list[str]  # ["text", the text] or ["image", the image's name]


def parts_to_text(parts: Iterable[Sequence[str]]) -> str:
    """The text column of a part list: texts, and `<image_N>` for the N-th image."""
    pieces: list[str] = []
    number = 0
    for kind, value in parts:
        if kind == "image":
            number += 1
            pieces.append(f"<image_{number}>")
        else:
            pieces.append(value)
    return _SEPARATOR.join(pieces)


def text_to_parts(text: str, images: Iterable[str]) -> list[Part]:
    """A part list from a text column and its images (in order), by MMRB2's rule."""
    if not PLACEHOLDER.search(text or ""):
        return ([["text", text]] if text else []) + [["image", image] for image in images]
    parts: list[Part] = []
    pending = list(images)
    for index, piece in enumerate(PLACEHOLDER.split(text)):
        if index % 2 == 0:
            if piece.strip():
                parts.append(["text", piece.strip()])
        elif pending:
            parts.append(["image", pending.pop(0)])
        else:  # a placeholder with no image left: the text it was (MMRB2 drops it)
            parts.append(["text", f"<image_{piece}>"])
    return _joined(parts) + [["image", image] for image in pending]


def _joined(parts: list[Part]) -> list[Part]:
    """Neighbouring text parts as one (a kept literal placeholder sits between two)."""
    joined: list[Part] = []
    for kind, value in parts:
        if kind == "text" and joined and joined[-1][0] == "text":
            joined[-1] = ["text", f"{joined[-1][1]} {value}"]
        else:
            joined.append([kind, value])
    return joined
