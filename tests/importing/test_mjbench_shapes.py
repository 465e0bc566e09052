"""Every MJ-Bench pair shape imports: its real quality files (photos included), its
alignment files (images not shipped: made here under their names), the scoring-model result
rows, its Hugging Face card without ids, and its Parquet with the images inside. The same
record in two category files is one pair, not a conflict."""

import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from PIL import Image

from content.importing.errors import ImportFailed
from content.importing.formats import read_records
from content.importing.images import ImageFolder
from content.models import Pair
from imports.services import pair_import
from imports.services.pair_import import pairs_import
from projects.models import Project
from tests.conftest import SHARED_MMRB2

pytestmark = pytest.mark.django_db

MJBENCH = SHARED_MMRB2.parent / "mjbench"
needs_mjbench = pytest.mark.skipif(not MJBENCH.is_dir(), reason="MJ-Bench files not in ../shared")


def _image(name: str, colour: int) -> bytes:
    kind = {"jpg": "JPEG", "jpeg": "JPEG", "webp": "WEBP"}.get(name.rsplit(".", 1)[-1], "PNG")
    buffer = io.BytesIO()
    Image.new("RGB", (12, 10), (colour % 256, 40, 90)).save(buffer, kind)
    return buffer.getvalue()


def _images_for(rows: list[dict], folder: Path, keys=("image0", "image1")) -> Path:
    folder.mkdir(exist_ok=True)
    for number, row in enumerate(rows):
        for offset, key in enumerate(keys):
            (folder / row[key]).write_bytes(_image(row[key], 2 * number + offset))
    return folder


@needs_mjbench
@pytest.mark.parametrize(
    ("captions", "images"),
    [
        ("quality/human/captions_human.json", "quality/human/examples_human"),
        ("quality/objects_indoor/captions_objects.json",
         "quality/objects_indoor/examples_objects_indoor"),
    ],
)  # fmt: skip
def test_the_real_quality_files_import_with_derived_ids(captions, images, media_root):
    rows = json.loads((MJBENCH / captions).read_text())
    summary = pairs_import(
        MJBENCH / captions, project_slug="mj", task_slug="quality", file_format="mjbench",
        images_dir=MJBENCH / images,
    )  # fmt: skip
    assert (summary.pairs, summary.derived_ids) == (100, 100)
    pairs = Pair.objects.filter(task__slug="quality")
    # label_0 = 1: image_0 (response A) is the better one, in every row of these files.
    assert {row["label_0"] for row in rows} == {1}
    assert set(pairs.values_list("reference_label", flat=True)) == {"A"}
    first = pairs.get(metadata__origin__row=0)
    assert first.external_id.startswith("mjbench-") and len(first.external_id) == 24
    assert first.metadata["origin"]["image_0"] == rows[0]["image_0"]
    assert first.prompt.content == [["text", rows[0]["caption"]]]
    again = pairs_import(
        MJBENCH / captions, project_slug="mj", task_slug="quality", file_format="mjbench",
        images_dir=MJBENCH / images,
    )  # fmt: skip
    assert (again.pairs, again.unchanged) == (0, 100)  # the derived ids are stable


@needs_mjbench
def test_alignment_files_keep_their_source_and_a_repeated_record_is_one_pair(tmp_path, media_root):
    files = {
        "actions": MJBENCH / "alignment/benchmark/actions/actions_test.json",
        "attributes": MJBENCH / "alignment/benchmark/attributes/attributes_test.json",
        "hpdv2-actions": MJBENCH / "alignment/benchmark/actions/hpdv2_actions_test.json",
        "imagereward-actions": MJBENCH
        / "alignment/benchmark/actions/imagereward_actions_test.json",
    }
    rows = {task: json.loads(path.read_text()) for task, path in files.items()}
    folder = tmp_path / "images"
    for task_rows in rows.values():
        _images_for(task_rows, folder)
    summaries = {
        task: pairs_import(
            path, project_slug="align", task_slug=task, file_format="mjbench", images_dir=folder
        )  # fmt: skip
        for task, path in files.items()
    }
    shared = {r["id"] for r in rows["actions"]} & {r["id"] for r in rows["attributes"]}
    assert shared, "the two category files repeat records"
    assert summaries["attributes"].in_other_tasks == len(shared)
    assert summaries["attributes"].pairs == len(rows["attributes"]) - len(shared)
    # Numbered rows are named by their source: hpdv2's 5 and imagereward's 5 are two pairs.
    hpdv2 = Pair.objects.get(external_id="hpdv2-5")
    assert hpdv2.prompt.source == "hpdv2" and hpdv2.task.slug == "hpdv2-actions"
    assert Pair.objects.filter(external_id__startswith="imagereward-").count() == len(
        rows["imagereward-actions"]
    )
    pick_a_pic = Pair.objects.get(external_id=rows["actions"][0]["id"])
    assert pick_a_pic.prompt.source == "pick_a_pic"
    expected = {0: "A", 1: "B", 0.5: "tie"}[rows["actions"][0]["label"]]
    assert pick_a_pic.reference_label == expected


def test_result_rows_and_the_card_schema_read_as_pairs(tmp_path, media_root):
    rows = [
        {"id": 0, "caption": "a sign", "sharp_image": "s0.jpg", "motion_blur_image": "m0.jpg",
         "score_0": 1.0, "score_1": 0.5, "label": "0", "pred": "0"},
        {"id": 1, "caption": "a cat", "image_0_path": "c0.jpg", "image_1_path": "c1.jpg",
         "score_0": 1.0, "score_1": 1.0, "label": "1", "pred": "tie"},
        {"caption": "a dog", "image0": "d0.png", "image1": "d1.png", "label": 0.5},
        {"caption": "a cup", "image_0": "u0.png", "image_1": "u1.png", "label_0": 0},
    ]  # fmt: skip
    folder = tmp_path / "images"
    folder.mkdir()
    for number, name in enumerate(
        ["s0.jpg", "m0.jpg", "c0.jpg", "c1.jpg", "d0.png", "d1.png", "u0.png", "u1.png"]
    ):
        (folder / name).write_bytes(_image(name, number * 30))
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    summary = pairs_import(path, project_slug="r", task_slug="t", file_format="mjbench",
                           images_dir=folder)  # fmt: skip
    assert (summary.pairs, summary.derived_ids) == (4, 2)
    labels = dict(Pair.objects.values_list("metadata__origin__row", "reference_label"))
    assert labels == {0: "A", 1: "B", 2: "tie", 3: "B"}
    sharp = Pair.objects.get(metadata__origin__row=0)
    assert sharp.metadata["origin"]["image_0"] == "s0.jpg"  # the sharp image is image 0


@pytest.mark.parametrize(
    ("row", "message"),
    [
        ({"caption": "x", "image0": "a.png"}, "missing field 'image1'"),
        ({"caption": "x", "image0": "a.png", "image1": "b.png"}, "missing field 'label'"),
        ({"caption": "x", "image_0": "a.png", "image_1": "b.png", "label_0": 2}, "label_0=2"),
        ({"caption": "x", "image0": "a.png", "image1": "b.png", "label": True}, "label=True"),
        ({"caption": "x", "photo": "a.png", "label": 0}, "no image fields"),
    ],
)
def test_a_broken_mjbench_row_names_its_problem(tmp_path, row, message):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([row]))
    with pytest.raises(ImportFailed, match=message):
        pairs_import(path, project_slug="b", task_slug="t", file_format="mjbench",
                     images_dir=tmp_path)  # fmt: skip


def _image_struct(name: str | None, colour: int) -> dict:
    return {"bytes": _image("x.png", colour), "path": name}


def test_the_hugging_face_parquet_with_images_inside_imports(tmp_path, media_root):
    table = pa.table(
        {
            "caption": ["a red bus", "a blue car"],
            "image0": [_image_struct("bus0.png", 1), _image_struct(None, 2)],
            "image1": [_image_struct("bus1.png", 3), _image_struct(None, 4)],
            "label": [1, 0],
        }
    )
    path = tmp_path / "mjbench.parquet"
    pq.write_table(table, path)
    summary = pairs_import(path, project_slug="hf", task_slug="t", file_format="parquet")
    assert (summary.pairs, summary.derived_ids, summary.images_new) == (2, 2, 4)
    bus = Pair.objects.get(prompt__content=[["text", "a red bus"]])
    assert bus.reference_label == "B"
    assert bus.metadata["origin"]["image_0"] == "bus0.png"
    car = Pair.objects.get(prompt__content=[["text", "a blue car"]])
    assert car.metadata["origin"]["image_0"] != car.metadata["origin"]["image_1"]
    again = pairs_import(path, project_slug="hf", task_slug="t", file_format="parquet")
    assert again.unchanged == 2
    assert Project.objects.get(slug="hf").pairs.count() == 2


def test_an_unchanged_pair_imported_before_the_fingerprint_change_stays_unchanged(
    tmp_path, media_root
):
    """Pairs imported before fingerprints left the task out keep their old fingerprints."""
    rows = [{"id": "p1", "caption": "c", "image0": "a.png", "image1": "b.png", "label": 0}]
    folder = tmp_path / "images"
    _images_for(rows, folder)
    path = tmp_path / "rows.json"
    path.write_text(json.dumps(rows))
    pairs_import(path, project_slug="old", task_slug="t", file_format="mjbench", images_dir=folder)
    [record] = read_records(path, "mjbench")
    prepared = pair_import._prepare(record, "t", ImageFolder(folder), {})
    assert prepared.legacy_fingerprint != prepared.fingerprint
    Pair.objects.update(fingerprint=prepared.legacy_fingerprint)
    again = pairs_import(
        path, project_slug="old", task_slug="t", file_format="mjbench", images_dir=folder
    )
    assert again.unchanged == 1


@pytest.mark.parametrize(
    "row",
    [
        {"caption": "x", "image0": "a.png", "image1": "b.png", "label": [0]},
        {"caption": "x", "image0": "a.png", "image1": "b.png", "label": {}},
        {"caption": "x", "image_0": "a.png", "image_1": "b.png", "label_0": [1]},
    ],
)
def test_a_label_of_the_wrong_type_is_refused_not_a_crash(tmp_path, row):
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([row]))
    with pytest.raises(ImportFailed, match="label"):
        pairs_import(path, project_slug="b", task_slug="t", file_format="mjbench",
                     images_dir=tmp_path)  # fmt: skip


def test_a_number_too_long_to_convert_is_invalid_json(tmp_path):
    path = tmp_path / "huge.jsonl"
    path.write_text('{"id": "x", "scale": ' + "9" * 5000 + "}\n")
    with pytest.raises(ImportFailed, match="invalid JSON"):
        pairs_import(path, project_slug="b", task_slug="t")
