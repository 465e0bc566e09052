"""An upload's refusal names the file, the record and the image, never where the server keeps
them: an image missing from a zip archive was reported as "not found in
/tmp/arbiter-upload-…/files", the private temporary folder the archive was unpacked in. Every
kind of refusal that reads the unpacked files is tried through the API."""

import io
import json
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from content.models import Pair
from projects.models import Project
from tests.api.conftest import token_client
from tests.factories import image_bytes, member, mmrb2_pair

pytestmark = pytest.mark.django_db


def _zip(files: dict[str, bytes]) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        for name, data in files.items():
            archive.writestr(name, data)
    return buffer.getvalue()


def _mmrb2(image_a: str = "a.png") -> bytes:
    return json.dumps({"pairs": [mmrb2_pair("p1", image_a=image_a, scores=())]}).encode()


PNG, OTHER_PNG = image_bytes((1, 2, 3)), image_bytes((4, 5, 6))
BROKEN_PARQUET = b"PAR1" + b"junk" * 30 + b"PAR1"
UPLOADS = {
    "image missing from the zip": ("mmrb2", "p.zip", _zip({"pairs.json": _mmrb2(), "b.png": PNG})),
    "image naming a folder": (
        "mmrb2", "p.zip", _zip({"pairs.json": _mmrb2("d/"), "d/x.png": PNG, "b.png": OTHER_PNG}),
    ),
    "image that is not one": (
        "mmrb2", "p.zip", _zip({"pairs.json": _mmrb2(), "a.png": PNG[:40], "b.png": OTHER_PNG}),
    ),
    "image cut short": (
        "mmrb2", "p.zip",
        _zip({"pairs.json": _mmrb2(), "a.png": PNG[:8] + b"junk" * 20, "b.png": OTHER_PNG}),
    ),
    "parquet that is not one": ("parquet", "p.parquet", BROKEN_PARQUET),
    "parquet in a zip that is not one": ("parquet", "p.zip", _zip({"p.parquet": BROKEN_PARQUET})),
    "zip members that clash": (
        "mmrb2", "p.zip", _zip({"pairs.json": b"{}", "a.png/x.png": PNG, "a.png": PNG}),
    ),
    "json that is not utf-8": ("native", "p.json", b'[{"id": "\xff"}]'),
}  # fmt: skip


@pytest.mark.parametrize("kind", list(UPLOADS))
def test_an_uploads_refusal_never_names_the_servers_folders(tmp_path, settings, kind):
    server_temp = tmp_path / "server-temp"
    server_temp.mkdir()
    settings.ARBITER_IMPORT_TEMP_DIR = str(server_temp)
    lead = member("lead", Project.objects.create(slug="alpha", name="Alpha"), role="lead")
    file_format, name, data = UPLOADS[kind]
    answer = token_client(lead).post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": file_format,
         "file": SimpleUploadedFile(name, data)},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 400, answer.content
    shown = answer.content.decode()
    for folder in (str(tmp_path), str(settings.MEDIA_ROOT), "arbiter-upload-", "/tmp/"):
        assert folder not in shown, shown
    assert not Pair.objects.exists()
