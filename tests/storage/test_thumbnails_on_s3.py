"""With media in an S3 bucket, a thumbnail is made once from the cleaned copy in the bucket,
stored there beside it (never on the node's disk) and streamed from the bucket afterwards;
scoped as the full image is. Against moto's real S3 server (tests/object_store.py)."""

import io

import pytest
from django.test import Client
from PIL import Image

from content.thumbnails import THUMBNAIL_PX, thumbnail_name
from projects.models import Membership
from tests.factories import member
from tests.pair_browser.test_thumbnails import MISSING, SECRET, body, photo_project, thumb_url
from tests.responses import unmasked

pytestmark = pytest.mark.django_db


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def test_a_thumbnail_is_stored_in_the_bucket_and_streamed_from_it(s3_media, tmp_path):
    project, shas = photo_project(tmp_path)
    lead = signed_in(member("lead", project, role=Membership.Role.LEAD))
    stored = thumbnail_name(shas[0])
    assert stored not in s3_media.names("thumbnails/")
    first = lead.get(thumb_url(shas[0]))
    assert first.status_code == 200 and first["Content-Type"] == "image/webp"
    data = body(first)
    with Image.open(io.BytesIO(data)) as thumb:
        assert thumb.size == (THUMBNAIL_PX, 72)
    assert SECRET.encode() not in data
    assert s3_media.names("thumbnails/") == [stored]
    assert s3_media.get(stored) == data
    assert s3_media.local_files() == []  # the scratch copy of the source is gone
    # The next request streams what the bucket holds.
    marker = io.BytesIO()
    Image.new("RGB", (2, 2), (0, 0, 255)).save(marker, "WEBP")
    s3_media.put(stored, marker.getvalue())
    again = lead.get(thumb_url(shas[0]))
    assert again.status_code == 200 and again.streaming
    assert body(again) == marker.getvalue()
    assert again["Cache-Control"] == "private, max-age=31536000, immutable"


def test_out_of_scope_and_undecodable_images_answer_like_a_missing_one(s3_media, tmp_path):
    project, shas = photo_project(tmp_path)
    other, _ = photo_project(tmp_path, slug="other", size=(64, 48))
    outsider = signed_in(member("other-lead", other, role=Membership.Role.LEAD))
    missing = outsider.get(thumb_url(MISSING))
    hidden = outsider.get(thumb_url(shas[0]))
    assert missing.status_code == hidden.status_code == 404
    assert unmasked(body(hidden)) == unmasked(body(missing))
    lead = signed_in(member("lead", project, role=Membership.Role.LEAD))
    for name in s3_media.names("assets"):  # originals and cleaned copies of shas[1]
        if shas[1] in name:
            s3_media.put(name, b"\xff\xd8\xff\xe0 not a JPEG after all")
    broken = lead.get(thumb_url(shas[1]))
    assert broken.status_code == 404
    assert unmasked(body(broken)) == unmasked(body(lead.get(thumb_url(MISSING))))
    assert s3_media.names("thumbnails/") == []
