"""Small builders for test data: images on disk and pair records."""

import io
import json
from pathlib import Path

from PIL import Image


def write_image(path: Path, color=(200, 40, 40), size=(24, 16), fmt="PNG") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    Image.new("RGB", size, color).save(path, fmt)
    return path


def image_bytes(color=(0, 0, 0), size=(8, 8), fmt="PNG") -> bytes:
    buffer = io.BytesIO()
    Image.new("RGB", size, color).save(buffer, fmt)
    return buffer.getvalue()


def mmrb2_pair(
    pair_id: str,
    *,
    scores=(5, 6, 5),
    chosen="A",
    image_a="a.png",
    image_b="b.png",
    prompt=None,
    model_a="gen-1",
    model_b="gen-2",
) -> dict:
    pair = {
        "id": pair_id,
        "prompt_source": "unit-test",
        "prompt_metadata": {"id": pair_id},
        "response_a": {"model_name": model_a, "response_content": [["image", image_a]]},
        "response_b": {"model_name": model_b, "response_content": [["image", image_b]]},
        "chosen": chosen,
        "human_annotations": list(scores),
    }
    if prompt is not None:
        pair["prompt_content"] = prompt
    return pair


def write_jsonl(path: Path, records) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def write_mmrb2(path: Path, pairs) -> Path:
    path.write_text(json.dumps({"pairs": list(pairs)}))
    return path
