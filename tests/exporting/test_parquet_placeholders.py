"""Interleaving survives Parquet both ways: the export's text columns carry MMRB2's
`<image_N>` placeholders, so MMRB2's own converter (benchmark/build_from_hf.py, run here on
the exported file) gives back every text/image order, and Arbiter reads the placeholders of a
Hugging Face layout file the same way."""

import hashlib
import importlib.util
import io

import pyarrow.parquet as pq
import pytest
from django.core.management import call_command
from PIL import Image

from content.models import Asset, Pair
from content.placeholders import parts_to_text, text_to_parts
from tests.conftest import SHARED_MMRB2
from tests.factories import write_image, write_jsonl

pytestmark = pytest.mark.django_db

# (prompt, response A, response B): text and images alternating in every way.
CONTENTS = [
    ([["text", "Tell a story"], ["image", "p0.png"]],
     [["text", "Once"], ["image", "a0.png"], ["text", "then"], ["image", "a1.png"]],
     [["image", "b0.png"], ["text", "The end."]]),
    ([["text", "Solve it"]],
     [["image", "a0.png"], ["image", "a1.png"], ["text", "so 4"]],
     [["text", "Step 1"], ["image", "b0.png"], ["text", "Step 2"], ["image", "a1.png"],
      ["text", "done"]]),
    ([["text", "Draw"]], [["image", "a1.png"]], [["text", "no image here"]]),
]  # fmt: skip


def _pixels(data: bytes) -> str:
    return hashlib.sha256(Image.open(io.BytesIO(data)).convert("RGB").tobytes()).hexdigest()


@pytest.fixture
def interleaved(tmp_path, _media_in_tmp):
    colours = {"p0.png": (250, 0, 0), "a0.png": (0, 250, 0), "a1.png": (0, 0, 250),
               "b0.png": (250, 250, 0)}  # fmt: skip
    for name, colour in colours.items():
        write_image(tmp_path / name, color=colour)
    records = [
        {"id": f"x{n}", "prompt_source": "unit", "prompt_content": prompt,
         "response_a": {"model_name": "m1", "response_content": a},
         "response_b": {"model_name": "m2", "response_content": b},
         "chosen": "A", "human_annotations": [5, 6, 5]}
        for n, (prompt, a, b) in enumerate(CONTENTS)
    ]  # fmt: skip
    call_command("import_pairs", str(write_jsonl(tmp_path / "p.jsonl", records)), project="il",
                 task="interleaved", images=str(tmp_path), stdout=io.StringIO())  # fmt: skip
    out = tmp_path / "export"
    call_command("export_dataset", project="il", out=str(out), file_format="parquet",
                 stdout=io.StringIO())  # fmt: skip
    pixels = {name: _pixels((tmp_path / name).read_bytes()) for name in colours}
    return out / "interleaved.parquet", pixels


def _expected(parts, pixels) -> list:
    return [[kind, pixels[value] if kind == "image" else value] for kind, value in parts]


def _mmrb2_converter():
    pytest.importorskip("datasets")  # build_from_hf.py imports it at the top
    spec = importlib.util.spec_from_file_location(
        "mmrb2_build_from_hf", SHARED_MMRB2 / "reference" / "build_from_hf.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.extract_images_and_text


@pytest.mark.mmrb2
def test_mmrb2s_converter_gets_every_order_back_from_the_export(interleaved, tmp_path):
    path, pixels = interleaved
    convert = _mmrb2_converter()
    rows = {row["pair_id"]: row for row in pq.read_table(path).to_pylist()}
    assert rows["x0"]["response_a_text"] == "Once\n\n<image_1>\n\nthen\n\n<image_2>"
    for n, contents in enumerate(CONTENTS):
        row = rows[f"x{n}"]
        for prefix, original in zip(("prompt", "response_a", "response_b"), contents, strict=True):
            images = [Image.open(io.BytesIO(i["bytes"])) for i in row[f"{prefix}_images"]]
            folder = tmp_path / f"mmrb2-{n}-{prefix}"
            parts = convert(row[f"{prefix}_text"], images, "images", folder, f"x{n}", prefix)
            got = [
                [kind, _pixels((folder / value).read_bytes()) if kind == "image" else value]
                for kind, value in parts
            ]
            assert got == _expected(original, pixels), (n, prefix)


def test_a_hugging_face_layout_file_is_read_by_its_placeholders(interleaved, tmp_path):
    path, pixels = interleaved
    table = pq.read_table(path)
    arbiter_only = ("ratings", "adjudication", "metadata")
    hugging_face = table.select(
        [
            name
            for name in table.column_names
            if not name.endswith(("_content", "_grades")) and name not in arbiter_only
        ]
    )
    only_hf = tmp_path / "hf.parquet"
    pq.write_table(hugging_face, only_hf)
    call_command("import_pairs", str(only_hf), project="back", task="interleaved",
                 file_format="parquet", stdout=io.StringIO())  # fmt: skip
    stored = {asset.sha256: _pixels(asset.file.read()) for asset in Asset.objects.all()}
    for n, (prompt, a, b) in enumerate(CONTENTS):
        pair = Pair.objects.select_related("prompt", "response_a", "response_b").get(
            project__slug="back", external_id=f"x{n}"
        )
        for content, original in ((pair.prompt.content, prompt), (pair.response_a.content, a),
                                  (pair.response_b.content, b)):  # fmt: skip
            got = [[k, stored[v] if k == "image" else v] for k, v in content]
            assert got == _expected(original, pixels), n


@pytest.mark.parametrize(
    ("text", "images", "parts"),
    [
        ("", ["i1"], [["image", "i1"]]),
        (
            "caption only",
            ["i1", "i2"],
            [["text", "caption only"], ["image", "i1"], ["image", "i2"]],
        ),
        # One image short: MMRB2 drops the second placeholder, Arbiter keeps it as text.
        ("<image_1> a <image_2>", ["i1"], [["image", "i1"], ["text", "a <image_2>"]]),
        # Two images, one placeholder: MMRB2 drops the second, Arbiter appends it.
        ("see <image_7>", ["i1", "i2"], [["text", "see"], ["image", "i1"], ["image", "i2"]]),
    ],
)
def test_placeholders_are_read_by_mmrb2s_rule(text, images, parts):
    assert text_to_parts(text, images) == parts


def test_placeholders_round_trip():
    parts = [["text", "a"], ["image", "x"], ["image", "y"], ["text", "b"]]
    assert parts_to_text(parts) == "a\n\n<image_1>\n\n<image_2>\n\nb"
    assert text_to_parts(parts_to_text(parts), ["x", "y"]) == parts
    assert text_to_parts("", []) == []
