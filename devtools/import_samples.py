"""The sample files the upload form offers, one per format (static/samples/).

    .venv/bin/python -m devtools.import_samples    # rewrites static/samples/

Each is a small, valid file of its format with two pairs: a zip of the data file and the
images it names for the JSON formats, a Parquet file with the images inside. The test
tests/tasks/test_upload_form.py imports every one through the page, so they stay valid.
"""

import io
import json
import sys
import zipfile
from pathlib import Path

from content.importing.formats import SAMPLE_FILES

SAMPLES_DIR = Path(__file__).resolve().parents[1] / "static" / "samples"
_PROMPTS = ("A red lighthouse on a cliff at dusk", "Two cats sharing one blue umbrella")


def _png(color: tuple[int, int, int], accent: tuple[int, int, int]) -> bytes:
    from PIL import Image, ImageDraw

    image = Image.new("RGB", (64, 48), color)
    ImageDraw.Draw(image).ellipse((18, 10, 46, 38), fill=accent)
    buffer = io.BytesIO()
    image.save(buffer, format="PNG", optimize=True)
    return buffer.getvalue()


def _images() -> dict[str, bytes]:
    return {
        "images/p1-a.png": _png((200, 60, 50), (250, 230, 120)),
        "images/p1-b.png": _png((60, 60, 90), (220, 80, 60)),
        "images/p2-a.png": _png((70, 110, 200), (240, 240, 240)),
        "images/p2-b.png": _png((90, 160, 90), (40, 40, 40)),
    }


def _zip(data_name: str, data: str, images: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr(data_name, data)
        for name, content in images.items():
            archive.writestr(name, content)
    return buffer.getvalue()


def _native_pairs() -> list[dict]:
    """Unlabelled pairs in Arbiter's native layout (MMRB2's pair objects, one per line)."""
    return [
        {
            "id": f"sample-{n}",
            "prompt_source": "sample",
            "prompt_content": [["text", prompt]],
            "response_a": {
                "model_name": "model-one",
                "response_content": [["image", f"images/p{n}-a.png"]],
            },
            "response_b": {
                "model_name": "model-two",
                "response_content": [["image", f"images/p{n}-b.png"]],
            },
        }
        for n, prompt in enumerate(_PROMPTS, start=1)
    ]


def native_sample() -> bytes:
    lines = "".join(json.dumps(pair) + "\n" for pair in _native_pairs())
    return _zip("pairs.jsonl", lines, _images())


def mmrb2_sample() -> bytes:
    """MMRB2's release layout: `{"pairs": [...]}`, here with the preferred side (`chosen`)
    and no experts' scores: MMRB2's are on 1..6, which only a 6-point project takes."""
    pairs = [
        {**pair, "chosen": chosen} for pair, chosen in zip(_native_pairs(), ("A", "B"), strict=True)
    ]
    return _zip("pairs.json", json.dumps({"pairs": pairs}, indent=1), _images())


def mjbench_sample() -> bytes:
    """MJ-Bench's alignment rows: `label` is the index of the preferred image."""
    rows = [
        {
            "id": f"sample-{n}",
            "source": "sample",
            "caption": prompt,
            "image0": f"images/p{n}-a.png",
            "image1": f"images/p{n}-b.png",
            "label": label,
        }
        for (n, prompt), label in zip(enumerate(_PROMPTS, start=1), (0, 1), strict=True)
    ]
    return _zip("pairs.json", json.dumps(rows, indent=1), _images())


def parquet_sample() -> bytes:
    """MMRB2's Hugging Face layout: the images' bytes inside the file."""
    import pyarrow as pa
    import pyarrow.parquet as pq

    image_list = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
    schema = pa.schema(
        [
            ("pair_id", pa.string()),
            ("prompt_text", pa.string()),
            ("prompt_images", image_list),
            ("response_a_text", pa.string()),
            ("response_a_images", image_list),
            ("response_b_text", pa.string()),
            ("response_b_images", image_list),
            ("response_a_model", pa.string()),
            ("response_b_model", pa.string()),
            ("chosen", pa.string()),
            ("human_annotations", pa.string()),  # JSON: the experts' scores (none here)
            ("prompt_source", pa.string()),
        ]
    )
    images = _images()
    rows = [
        {
            "pair_id": f"sample-{n}",
            "prompt_text": prompt,
            "prompt_images": [],
            "response_a_text": "",
            "response_a_images": [{"bytes": images[f"images/p{n}-a.png"], "path": None}],
            "response_b_text": "",
            "response_b_images": [{"bytes": images[f"images/p{n}-b.png"], "path": None}],
            "response_a_model": "model-one",
            "response_b_model": "model-two",
            "chosen": "",
            "human_annotations": "[]",
            "prompt_source": "sample",
        }
        for n, prompt in enumerate(_PROMPTS, start=1)
    ]
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist(rows, schema=schema), buffer)
    return buffer.getvalue()


BUILDERS = {
    "native": native_sample,
    "mmrb2": mmrb2_sample,
    "mjbench": mjbench_sample,
    "parquet": parquet_sample,
}


def write_samples(folder: Path = SAMPLES_DIR) -> list[Path]:
    folder.mkdir(parents=True, exist_ok=True)
    written = []
    for file_format, name in SAMPLE_FILES.items():
        path = folder / name
        path.write_bytes(BUILDERS[file_format]())
        written.append(path)
    return written


if __name__ == "__main__":
    for path in write_samples(Path(sys.argv[1]) if len(sys.argv) > 1 else SAMPLES_DIR):
        print(path, path.stat().st_size, "bytes")
