"""What goes to and comes from the bucket stays bounded: big files go up in parts and come
down as a stream, with a few MiB of memory whatever their size, and a hostile upload is
refused while it streams, before anything reaches the bucket."""

import os
import tracemalloc

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from content.importing.errors import ImportFailed
from core.media_store import media_response, media_store
from imports.models import ImportJob
from imports.services.import_jobs import import_job_start
from projects.models import Membership, Project
from tests.factories import member

pytestmark = pytest.mark.django_db
SIZE = 24 << 20  # three multipart parts
BOUND = SIZE // 3  # memory allowed for the whole transfer


def test_a_big_file_goes_up_in_parts_and_comes_down_streamed_in_bounded_memory(s3_media, tmp_path):
    source = tmp_path / "big.zip"
    source.write_bytes(os.urandom(SIZE))
    store = media_store()
    store.put_bytes("warm-up", b"x")  # botocore loads its service models once (~12 MiB)
    store.delete("warm-up")
    tracemalloc.start()
    try:
        store.put_file("exports/1/big.zip", source)
        _, up_peak = tracemalloc.get_traced_memory()
        tracemalloc.reset_peak()
        answer = media_response("exports/1/big.zip", as_attachment=True, filename="big.zip")
        assert answer is not None and answer["Content-Length"] == str(SIZE)
        received, digest_ok = 0, True
        with source.open("rb") as original:
            for chunk in answer.streaming_content:
                digest_ok &= chunk == original.read(len(chunk))
                received += len(chunk)
        _, down_peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert received == SIZE and digest_ok
    print(f"\n24 MiB: up peak {up_peak / 2**20:.1f} MiB, down peak {down_peak / 2**20:.1f} MiB")
    assert up_peak < BOUND and down_peak < BOUND
    assert s3_media.local_files() == []


def test_an_upload_above_the_limit_is_refused_while_it_streams_and_nothing_reaches_the_bucket(
    s3_media, settings
):
    settings.ARBITER_UPLOAD_MAX_BYTES = 1000
    project = Project.objects.create(slug="s3", name="S3")
    lead = member("lead", project, role=Membership.Role.LEAD)

    upload = SimpleUploadedFile("pairs.jsonl", b'{"id": "x"}\n' * 200)
    upload.size = None  # not declared: the size is counted while the upload streams
    with pytest.raises(ImportFailed, match="above the 1000 bytes limit"):  # counted
        import_job_start(project, lead, upload, task_slug="t2i")
    assert s3_media.names() == []
    assert not ImportJob.objects.filter(file__gt="").exists()
