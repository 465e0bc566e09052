"""`pairs_import_upload` (the REST API's bulk import): good uploads are imported like
`import_pairs`; hostile ones are refused with ImportFailed and leave nothing behind: no rows,
no media files, no temporary folder."""

import io
import json
import stat
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Rating
from content.importing.errors import ImportFailed
from content.models import Asset, Pair
from imports.services import pair_upload as upload_module
from imports.services.pair_upload import pairs_import_upload
from tests.factories import image_bytes, mmrb2_pair
from tests.importing.helpers import (
    HF_SCHEMA,
    arbiter_row,
    assert_nothing_written,
    hf_image,
    stored_images,
    write_parquet,
)

pytestmark = pytest.mark.django_db

RED_PNG = image_bytes((200, 40, 40))
BLUE_PNG = image_bytes((40, 40, 200))
MB = 1024 * 1024


def jsonl(rows) -> bytes:
    return "".join(json.dumps(r) + "\n" for r in rows).encode()


def zip_of(members) -> bytes:
    """A zip archive of (name or ZipInfo, bytes) pairs, deflated."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        for name, data in members:
            zf.writestr(name, data)
    return buffer.getvalue()


def text_pair(pair_id) -> dict:
    pair = mmrb2_pair(pair_id)
    pair["response_a"]["response_content"] = [["text", "a text answer"]]
    pair["response_b"]["response_content"] = [["text", "another answer"]]
    return pair


def upload(name, content, file_format="native", **kwargs):
    uploaded = SimpleUploadedFile(name, content)
    return pairs_import_upload(
        uploaded, project_slug="api", task_slug="t2i", file_format=file_format, **kwargs
    )


@pytest.fixture
def left_behind(import_temp, media_root):
    """Call after a refusal: asserts that nothing was written anywhere."""

    def check():
        assert_nothing_written(media_root)
        assert list(import_temp.iterdir()) == []

    return check


# --------------------------------------------------------------------------- good uploads


def test_zip_with_export_rows_and_images(import_temp, media_root, monkeypatch):
    seen_during_import = []

    def spy(path, **kwargs):
        seen_during_import.extend(p.name for p in import_temp.iterdir())
        return original(path, **kwargs)

    original = upload_module.pairs_import
    monkeypatch.setattr(upload_module, "pairs_import", spy)
    data = jsonl([arbiter_row("p1"), arbiter_row("p2", ratings=[], reference_label="B")])
    archive = zip_of(
        [
            ("export/", b""),
            ("export/t2i.jsonl", data),
            ("export/manifest.json", b'{"format": "arbiter-dataset"}'),
            ("export/images/a.png", RED_PNG),
            ("export/images/b.png", BLUE_PNG),
            ("export/images/unused.png", image_bytes((1, 2, 3))),
        ]
    )

    summary = upload("my export.ZIP", archive)

    assert (summary.pairs, summary.ratings, summary.images_new) == (2, 3, 2)
    assert Pair.objects.get(external_id="p2").label == "B"
    assert Rating.objects.filter(annotator__username="imported-api-r-0123456789ab").exists()
    assert Asset.objects.count() == 2
    assert len(stored_images(media_root)) == 2
    assert seen_during_import and seen_during_import[0].startswith("arbiter-upload-")
    assert list(import_temp.iterdir()) == []


def test_plain_jsonl_and_json_uploads(import_temp):
    assert upload("pairs.jsonl", jsonl([text_pair("t1"), text_pair("t2")])).pairs == 2
    body = json.dumps({"pairs": [text_pair("t3")]}).encode()
    assert upload("release.json", body, file_format="mmrb2").pairs == 1
    assert Pair.objects.count() == 3
    assert list(import_temp.iterdir()) == []


def test_parquet_upload_alone_and_zipped(tmp_path, import_temp, media_root):
    rows = [hf_row_simple("h1")]
    data = write_parquet(tmp_path / "t.parquet", rows, HF_SCHEMA).read_bytes()
    assert upload("t.parquet", data, file_format="parquet").pairs == 1
    rows = [hf_row_simple("h2")]
    data = write_parquet(tmp_path / "u.parquet", rows, HF_SCHEMA).read_bytes()
    summary = upload("u.zip", zip_of([("deep/er/u.parquet", data)]), file_format=None)
    assert (summary.pairs, summary.format) == (1, "parquet")
    assert Asset.objects.count() == 2
    assert list(import_temp.iterdir()) == []


def hf_row_simple(pair_id) -> dict:
    return {
        "pair_id": pair_id,
        "prompt_text": "Draw",
        "prompt_images": [],
        "response_a_text": "",
        "response_a_images": [hf_image(RED_PNG, "a.png")],
        "response_b_text": "",
        "response_b_images": [hf_image(BLUE_PNG, "b.png")],
        "response_a_model": "m1",
        "response_b_model": "m2",
        "chosen": "B",
        "human_annotations": "[]",
        "prompt_source": "hf",
        "prompt_metadata": "{}",
    }


def test_format_none_means_native_for_jsonl(import_temp):
    assert upload("p.jsonl", jsonl([text_pair("t1")]), file_format=None).format == "native"


def test_bad_record_inside_a_zip_names_it_and_writes_nothing(left_behind):
    bad = arbiter_row("p2")
    bad["human_annotations"] = [1, 2, 3]
    archive = zip_of(
        [
            ("t2i.jsonl", jsonl([arbiter_row("p1"), bad])),
            ("images/a.png", RED_PNG),
            ("images/b.png", BLUE_PNG),
        ]
    )
    with pytest.raises(ImportFailed) as excinfo:
        upload("x.zip", archive)
    assert excinfo.value.record == 2
    assert "differ from human_annotations" in str(excinfo.value)
    left_behind()


def test_images_are_looked_up_from_the_data_files_folder_only(left_behind):
    archive = zip_of(
        [
            ("sub/t2i.jsonl", jsonl([arbiter_row("p1")])),
            ("images/a.png", RED_PNG),  # beside sub/, not under it
            ("images/b.png", BLUE_PNG),
        ]
    )
    with pytest.raises(
        ImportFailed, match="record 1: image 'images/a.png' is not among the images"
    ):
        upload("x.zip", archive)
    left_behind()


# --------------------------------------------------------------------------- refusals


@pytest.fixture(scope="module")
def zeros_archive() -> bytes:
    """200 MB of zeros in one member (about 200 KB packed) beside a valid data file."""
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("pairs.jsonl", jsonl([text_pair("t1")]))
        with zf.open("zeros.png", "w", force_zip64=True) as member:
            for _ in range(200):
                member.write(bytes(MB))
    return buffer.getvalue()


def _symlink_member() -> zipfile.ZipInfo:
    info = zipfile.ZipInfo("link.png")
    info.create_system = 3
    info.external_attr = (stat.S_IFLNK | 0o777) << 16
    return info


def _lying_archive() -> bytes:
    """A member whose directory entries declare 10 bytes for its 40 KB."""
    data = jsonl([text_pair(f"t{i}") for i in range(100)])
    archive = bytearray(zip_of([("pairs.jsonl", data)]))
    local, central = archive.find(b"PK\x03\x04"), archive.find(b"PK\x01\x02")
    archive[local + 22 : local + 26] = (10).to_bytes(4, "little")
    archive[central + 24 : central + 28] = (10).to_bytes(4, "little")
    return bytes(archive)


GOOD_DATA = ("pairs.jsonl", jsonl([text_pair("t1")]))


def _case(name, settings, zeros_archive):
    """(upload name, upload bytes, file format, expected words) of a refused upload."""
    if name == "dotdot":
        return "x.zip", zip_of([GOOD_DATA, ("../evil.png", RED_PNG)]), "leaves the archive"
    if name == "dotdot-inside":
        return "x.zip", zip_of([GOOD_DATA, ("a/../../evil.png", RED_PNG)]), "leaves the archive"
    if name == "absolute":
        return "x.zip", zip_of([GOOD_DATA, ("/tmp/evil.png", RED_PNG)]), "is an absolute path"
    if name == "drive-letter":
        return "x.zip", zip_of([GOOD_DATA, ("C:/evil.png", RED_PNG)]), "names a drive"
    if name == "backslash":
        return "x.zip", zip_of([GOOD_DATA, ("..\\evil.png", RED_PNG)]), "uses backslashes"
    if name == "symlink":
        archive = zip_of([GOOD_DATA, (_symlink_member(), b"/etc/passwd")])
        return "x.zip", archive, "is a symbolic link"
    if name == "exe-member":
        return "x.zip", zip_of([GOOD_DATA, ("tool.exe", b"MZ\x90\x00")]), "neither a data file"
    if name == "txt-member":
        return "x.zip", zip_of([GOOD_DATA, ("notes.txt", b"hello")]), "neither a data file"
    if name == "zip-in-zip":
        inner = zip_of([GOOD_DATA])
        return "x.zip", zip_of([GOOD_DATA, ("inner.zip", inner)]), "neither a data file"
    if name == "gif-not-allowed":
        settings.ARBITER_IMAGE_FORMATS = ["JPEG", "PNG"]
        archive = zip_of([GOOD_DATA, ("x.gif", image_bytes(fmt="GIF"))])
        return "x.zip", archive, "neither a data file"
    if name == "fake-image":
        archive = zip_of([GOOD_DATA, ("fake.png", b"#!/bin/sh\nrm -rf /\n")])
        return "x.zip", archive, "'fake.png' is not an image of an allowed format"
    if name == "two-data-files":
        archive = zip_of([GOOD_DATA, ("more/other.json", b"[]")])
        return "x.zip", archive, "exactly one data file (.jsonl, .json, .parquet); found 2"
    if name == "no-data-file":
        return "x.zip", zip_of([("a.png", RED_PNG)]), "found 0: none"
    if name == "parquet-and-images":
        archive = zip_of([("t.parquet", b"PAR1....PAR1"), ("a.png", RED_PNG)])
        return "x.zip", archive, "a Parquet file carries its own images"
    if name == "duplicate-member":
        archive = zip_of([GOOD_DATA, ("a.png", RED_PNG), ("a.png", BLUE_PNG)])
        return "x.zip", archive, "'a.png' appears twice"
    if name == "too-many-members":
        settings.ARBITER_UPLOAD_MAX_MEMBERS = 3
        members = [GOOD_DATA, *((f"{i}.png", RED_PNG) for i in range(3))]
        return "x.zip", zip_of(members), "holds 4 entries, above the 3 limit"
    if name == "zip-bomb-ratio":
        return "bomb.zip", zeros_archive, "above the 200:1 limit (a zip bomb?)"
    if name == "zip-bomb-total":
        settings.ARBITER_UPLOAD_MAX_RATIO = 10_000
        settings.ARBITER_UPLOAD_MAX_UNPACKED_BYTES = 50 * MB
        return "bomb.zip", zeros_archive, f"unpacks to more than {50 * MB} bytes"
    if name == "lying-sizes":
        return "x.zip", _lying_archive(), "the zip archive is damaged"
    if name == "not-a-zip":
        return "data.zip", b"this is plain text, named .zip", "is not a zip archive"
    if name == "damaged-zip":
        return "data.zip", b"PK\x03\x04" + bytes(100), "the zip archive is damaged"
    if name == "jsonl-holding-png":
        return "data.jsonl", RED_PNG, "is named .jsonl but does not hold JSON"
    if name == "parquet-holding-json":
        return "data.parquet", b'{"id": 1}', "is named .parquet but is not a Parquet file"
    if name == "member-jsonl-holding-png":
        archive = zip_of([("pairs.jsonl", RED_PNG)])
        return "x.zip", archive, "'pairs.jsonl' is named .jsonl but does not hold JSON"
    if name == "unknown-extension":
        return "data.csv", b"id,caption\n", "upload a .jsonl, .json, .parquet or .zip file"
    if name == "exe-upload":
        return "setup.exe", b"MZ\x90\x00", "not 'setup.exe'"
    if name == "too-big":
        settings.ARBITER_UPLOAD_MAX_BYTES = 100
        return "pairs.jsonl", jsonl([text_pair("t1")]), "above the 100 limit"
    if name == "empty":
        return "pairs.jsonl", b"", "the uploaded file is empty"
    raise AssertionError(name)


REFUSED = [
    "dotdot",
    "dotdot-inside",
    "absolute",
    "drive-letter",
    "backslash",
    "symlink",
    "exe-member",
    "txt-member",
    "zip-in-zip",
    "gif-not-allowed",
    "fake-image",
    "two-data-files",
    "no-data-file",
    "parquet-and-images",
    "duplicate-member",
    "too-many-members",
    "zip-bomb-ratio",
    "zip-bomb-total",
    "lying-sizes",
    "not-a-zip",
    "damaged-zip",
    "jsonl-holding-png",
    "parquet-holding-json",
    "member-jsonl-holding-png",
    "unknown-extension",
    "exe-upload",
    "too-big",
    "empty",
]


@pytest.mark.filterwarnings("ignore:Duplicate name")  # the archive is built that way on purpose
@pytest.mark.parametrize("case", REFUSED)
def test_hostile_upload_is_refused_and_leaves_nothing(case, settings, zeros_archive, left_behind):
    name, content, expected = _case(case, settings, zeros_archive)
    file_format = "parquet" if name.endswith(".parquet") else "native"

    with pytest.raises(ImportFailed) as excinfo:
        upload(name, content, file_format=file_format)

    assert expected in str(excinfo.value)
    assert excinfo.value.record is None
    left_behind()


class _Streamed:
    """An upload whose size is unknown beforehand: the limit holds while reading."""

    name = "big.jsonl"
    size = None

    def chunks(self):
        for _ in range(10):
            yield b" " * 64


def test_upload_without_declared_size_is_counted(settings, left_behind):
    settings.ARBITER_UPLOAD_MAX_BYTES = 300
    with pytest.raises(ImportFailed, match="above the 300 bytes limit"):
        pairs_import_upload(_Streamed(), project_slug="api", task_slug="t2i", file_format=None)
    left_behind()


@pytest.mark.parametrize(
    ("name", "file_format", "expected"),
    [
        ("t.parquet", "native", "format 'native' does not fit the .parquet data file"),
        ("t.jsonl", "parquet", "format 'parquet' does not fit the .jsonl data file"),
        ("t.jsonl", "csv", "unknown format 'csv'"),
    ],
)
def test_format_that_does_not_fit_the_file_is_refused(
    tmp_path, left_behind, name, file_format, expected
):
    if name.endswith(".parquet"):
        content = write_parquet(tmp_path / name, [hf_row_simple("h")], HF_SCHEMA).read_bytes()
    else:
        content = jsonl([text_pair("t1")])
    with pytest.raises(ImportFailed, match=expected):
        upload(name, content, file_format=file_format)
    left_behind()


def test_bad_project_slug_is_an_import_failure(left_behind):
    uploaded = SimpleUploadedFile("p.jsonl", jsonl([text_pair("t1")]))
    with pytest.raises(ImportFailed, match="slug"):
        pairs_import_upload(uploaded, project_slug="not a slug!", task_slug="t", file_format=None)
    left_behind()


def test_plain_jsonl_naming_images_asks_for_a_zip(left_behind):
    with pytest.raises(ImportFailed) as excinfo:
        upload("pairs.jsonl", jsonl([mmrb2_pair("p1")]))
    assert excinfo.value.record == 1
    assert "a zip archive holding the data file and its images" in str(excinfo.value)
    left_behind()
