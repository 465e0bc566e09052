"""The lead's download: GET /projects/<slug>/export/ streams a .zip of the export folder."""

import io
import json
import zipfile
from pathlib import Path

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def temp_dir(settings, tmp_path) -> Path:
    settings.FILE_UPLOAD_TEMP_DIR = tmp_path / "tmp"
    settings.FILE_UPLOAD_TEMP_DIR.mkdir()
    return settings.FILE_UPLOAD_TEMP_DIR


def _download(client, slug, **params):
    return client.get(reverse("dash-export", args=[slug]), params)


def _archive(response, temp_dir: Path) -> zipfile.ZipFile:
    assert [p.suffix for p in temp_dir.iterdir()] == [".zip"]  # the export folder is gone
    body = b"".join(response.streaming_content)
    response.close()
    assert list(temp_dir.iterdir()) == []  # the zip is deleted once the download is done
    return zipfile.ZipFile(io.BytesIO(body))


def test_a_lead_downloads_the_zip(client, rated, temp_dir):
    client.force_login(rated.lead)
    response = _download(client, "exp", format="jsonl", task="", include_dropped="1")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="exp-jsonl.zip"'
    assert response["Content-Type"] == "application/zip"
    archive = _archive(response, temp_dir)
    names = archive.namelist()
    assert names[:3] == ["manifest.json", "edit.jsonl", "t2i.jsonl"]
    manifest = json.loads(archive.read("manifest.json"))
    assert set(manifest["files"]) == set(names) - {"manifest.json"}
    assert manifest["options"]["include_dropped"] is True
    assert manifest["counts"]["by_status"] == {"dropped": 1, "kept": 5}
    infos = {info.filename: info for info in archive.infolist()}
    assert infos["t2i.jsonl"].compress_type == zipfile.ZIP_DEFLATED
    image = next(name for name in names if name.startswith("images/"))
    assert infos[image].compress_type == zipfile.ZIP_STORED
    assert archive.testzip() is None


def test_parquet_of_one_task_with_verdicts(client, rated, temp_dir):
    client.force_login(rated.lead)
    response = _download(client, "exp", format="parquet", task="t2i", with_verdicts="on")
    assert response.status_code == 200
    assert response["Content-Disposition"] == 'attachment; filename="exp-parquet.zip"'
    archive = _archive(response, temp_dir)
    assert archive.namelist() == ["manifest.json", "t2i.parquet"]
    manifest = json.loads(archive.read("manifest.json"))
    assert manifest["options"] == {"task": "t2i", "include_dropped": False, "with_verdicts": True}


def test_only_the_projects_leads_may_download(client, rated):
    url = reverse("dash-export", args=["exp"])
    assert reverse("login") in client.get(url)["Location"]
    client.force_login(rated.annotators[0])
    assert client.get(url).status_code == 403
    client.force_login(User.objects.create_user("stranger"))
    assert client.get(url).status_code == 403
    client.force_login(rated.lead)
    assert client.get(reverse("dash-export", args=["nope"])).status_code == 404


@pytest.mark.parametrize(
    ("params", "message"),
    [
        ({"format": "csv"}, "unknown format 'csv'"),
        ({"task": "nope"}, "no task 'nope'"),
        ({"include_dropped": "maybe"}, "include_dropped must be 1 or 0"),
    ],
)
def test_bad_parameters_are_a_400_with_a_message(client, rated, temp_dir, params, message):
    client.force_login(rated.lead)
    response = _download(client, "exp", **params)
    assert response.status_code == 400
    assert message in response.content.decode()
    assert list(temp_dir.iterdir()) == []


def test_the_overview_offers_the_export_form(client, rated):
    client.force_login(rated.lead)
    body = client.get(reverse("dash-overview", args=["exp"])).content.decode()
    form = body.index(f'action="{reverse("dash-export", args=["exp"])}"')
    assert body.index("<h1>") < form  # in the page, not in its head
    assert '<option value="parquet">' in body and '<option value="t2i">' in body
    assert 'name="include_dropped"' in body and 'name="with_verdicts"' in body
