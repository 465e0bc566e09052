"""With S3_BUCKET set, media lives in the bucket, not on the local disk: an upload one web
node stores is imported by a worker with an empty local folder, its images land in the
bucket (originals and cleaned copies), and users get only cleaned copies, streamed through
Arbiter after the scope check. Against moto's real S3 server (tests/object_store.py)."""

import io
import json
import zipfile

import pytest
from django.contrib.auth.models import User
from django.core.files.uploadedfile import SimpleUploadedFile
from django.test import Client
from PIL import Image, PngImagePlugin

from content.models import Asset, Pair
from core.media_store import media_store
from imports.models import ImportJob
from imports.services.import_jobs import import_job_run, import_job_start
from projects.models import Membership, Project
from tests.api.conftest import token_client
from tests.factories import member
from tests.responses import unmasked

pytestmark = pytest.mark.django_db
SECRET = b"SecretGen-v9"
MISSING = "0" * 64


def _png_with_metadata(colour) -> bytes:
    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", SECRET.decode())
    buffer = io.BytesIO()
    Image.new("RGB", (12, 10), colour).save(buffer, "PNG", pnginfo=info)
    return buffer.getvalue()


def _pairs_zip(count: int = 2) -> bytes:
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w") as archive:
        lines = []
        for i in range(count):
            archive.writestr(f"img/a{i}.png", _png_with_metadata((i * 40 + 10, 0, 0)))
            archive.writestr(f"img/b{i}.png", _png_with_metadata((0, i * 40 + 10, 0)))
            record = {
                "id": f"p{i}",
                "prompt_content": [["text", f"draw {i}"]],
                "response_a": {
                    "model_name": "m1",
                    "response_content": [["image", f"img/a{i}.png"]],
                },
                "response_b": {
                    "model_name": "m2",
                    "response_content": [["image", f"img/b{i}.png"]],
                },
            }
            lines.append(json.dumps(record))
        archive.writestr("pairs.jsonl", "\n".join(lines) + "\n")
    return buffer.getvalue()


@pytest.fixture
def imported(s3_media, settings, tmp_path):
    """A project whose upload was stored by the web side and imported by the job as a worker
    on another machine runs it: with its own, empty, local folders."""
    project = Project.objects.create(slug="s3", name="S3")
    lead = member("lead", project, role=Membership.Role.LEAD)
    upload = SimpleUploadedFile("pairs.zip", _pairs_zip(), content_type="application/zip")
    job = import_job_start(project, lead, upload, task_slug="t2i")
    assert s3_media.names("imports/") == [f"imports/{job.pk}/upload.zip"]
    assert s3_media.local_files() == []
    other_machine = tmp_path / "worker-node"
    (other_machine / "tmp").mkdir(parents=True)
    settings.MEDIA_ROOT = other_machine / "media"
    settings.ARBITER_IMPORT_TEMP_DIR = str(other_machine / "tmp")
    import_job_run(job.pk)
    job.refresh_from_db()
    assert job.status == ImportJob.Status.DONE, job.error
    return project, lead, job, other_machine


def test_an_upload_stored_by_one_node_is_imported_by_a_worker_with_an_empty_folder(
    s3_media, imported
):
    project, _, job, other_machine = imported
    assert Pair.objects.filter(project=project).count() == 2
    assert job.file == ""
    assert s3_media.names("imports/") == []  # the upload is removed once imported
    shas = sorted(Asset.objects.values_list("sha256", flat=True))
    assert len(shas) == 4
    originals = [key for key in s3_media.names("assets/")]
    cleaned = [key for key in s3_media.names("assets-clean/")]
    assert sorted(key.rsplit("/", 1)[1].split(".")[0] for key in originals) == shas
    assert len(cleaned) == 4
    # Nothing on either node's disk: no media, and the worker's scratch copy is gone.
    assert s3_media.local_files() == []
    assert [p for p in other_machine.rglob("*") if p.is_file()] == []


def test_the_originals_keep_their_metadata_and_the_cleaned_copies_do_not(s3_media, imported):
    for asset in Asset.objects.all():
        assert SECRET in s3_media.get(asset.file.name)
    cleaned = s3_media.names("assets-clean/")
    assert cleaned
    for name in cleaned:
        data = s3_media.get(name)
        assert SECRET not in data
        Image.open(io.BytesIO(data)).load()


def _get(user, sha256: str) -> list[tuple[int, bytes]]:
    """(status, body) from the page URL and from the API."""
    client = Client()
    client.force_login(user)
    answers = [client.get(f"/assets/{sha256}"), token_client(user).get(f"/api/assets/{sha256}/")]
    return [
        (
            answer.status_code,
            unmasked(b"".join(answer.streaming_content) if answer.streaming else answer.content),
        )
        for answer in answers
    ]


def test_images_reach_members_streamed_from_the_bucket_cleaned_and_no_one_else(s3_media, imported):
    project, lead, _, _ = imported
    annotator = member("ann", project)
    outsider = User.objects.create_user("outsider")
    other = Project.objects.create(slug="other", name="Other")
    other_lead = member("other-lead", other, role=Membership.Role.LEAD)
    asset = Asset.objects.order_by("sha256").first()
    cleaned = media_store().read(
        next(key for key in s3_media.names("assets-clean/") if asset.sha256 in key)
    )
    assert _get(lead, asset.sha256) == [(200, cleaned), (200, cleaned)]
    assert SECRET not in cleaned
    # An annotator sees images of pairs they may see (the queue); outsiders and another
    # project's lead get exactly the answer of a hash that does not exist.
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    assert _get(annotator, asset.sha256) == [(200, cleaned), (200, cleaned)]
    for user in (outsider, other_lead):
        assert _get(user, asset.sha256) == _get(user, MISSING)
        assert [status for status, _ in _get(user, MISSING)] == [404, 404]
    assert s3_media.local_files() == []


def test_no_object_is_written_with_a_public_grant(s3_media, imported):
    from tests.object_store import s3_client

    client = s3_client(s3_media.endpoint)
    for name in s3_media.names():
        grants = client.get_object_acl(Bucket=s3_media.name, Key=f"arbiter/{name}")["Grants"]
        grantees = {grant["Grantee"].get("URI", "") for grant in grants}
        assert not any("AllUsers" in uri or "AuthenticatedUsers" in uri for uri in grantees)
