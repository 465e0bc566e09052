"""The lists of pairs show thumbnails, not the full images: `/assets/<sha256>/thumb` answers a
small WebP fitted within 96 px, without metadata, made once and then read from media storage,
to exactly the users who may see the full image (everyone else, signed out included, gets the
404 of a hash that does not exist); an image that does not decode has no thumbnail (404)."""

import io
import re
import threading

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test import Client
from django.test.utils import CaptureQueriesContext
from django.urls import reverse
from PIL import Image, ImageCms

from content.image_cleaning import clean_asset_name
from content.models import Asset, Pair
from content.thumbnails import THUMBNAIL_PX, thumbnail_make, thumbnail_name
from core.media_store import media_store
from imports.services.pair_import import pairs_import
from projects.models import Membership, Project
from tests.factories import member, write_jsonl
from tests.responses import unmasked

pytestmark = pytest.mark.django_db
MISSING = "0" * 64
SECRET = "SecretGen-v9"


def photo_jpeg(size=(1024, 768), seed=1) -> bytes:
    """A photograph's worth of detail (noise over gradients: large as a JPEG), with EXIF
    naming its generator, a comment and an ICC profile."""
    width, height = size
    noise = Image.effect_noise(size, 48 + seed)
    gradient = Image.linear_gradient("L").resize(size)
    image = Image.merge("RGB", (noise, gradient, gradient.transpose(Image.Transpose.ROTATE_180)))
    exif = Image.Exif()
    exif[0x0131] = SECRET  # Software
    exif[0x010E] = f"made by {SECRET}"  # ImageDescription
    icc = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()
    buffer = io.BytesIO()
    image.save(buffer, "JPEG", quality=92, exif=exif, icc_profile=icc, comment=SECRET)
    return buffer.getvalue()


def photo_project(folder, slug="photos", size=(1024, 768)) -> tuple[Project, list[str]]:
    """A project of two pairs whose responses are photos; the images' SHA-256s (A, B, A, B)."""
    images = folder / f"images-{slug}"
    images.mkdir(parents=True)
    records = []
    for i in range(2):
        (images / f"a{i}.jpg").write_bytes(photo_jpeg(size, seed=2 * i))
        (images / f"b{i}.jpg").write_bytes(photo_jpeg(size[::-1], seed=2 * i + 1))
        records.append(
            {
                "id": f"{slug}-{i}",
                "prompt_content": [["text", f"photograph {i}"]],
                "response_a": {"model_name": "m1", "response_content": [["image", f"a{i}.jpg"]]},
                "response_b": {"model_name": "m2", "response_content": [["image", f"b{i}.jpg"]]},
            }
        )
    source = write_jsonl(folder / f"{slug}.jsonl", records)
    pairs_import(source, project_slug=slug, task_slug="t2i", images_dir=images)
    project = Project.objects.get(slug=slug)
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    shas = []
    for pair in Pair.objects.filter(project=project).order_by("pk"):
        shas += [pair.response_a.content[0][1], pair.response_b.content[0][1]]
    return project, shas


def thumb_url(sha256: str) -> str:
    return reverse("asset-thumbnail", args=[sha256])


def body(response) -> bytes:
    return b"".join(response.streaming_content) if response.streaming else response.content


def signed_in(user) -> Client:
    client = Client()
    client.force_login(user)
    return client


def webp_chunks(data: bytes) -> list[bytes]:
    assert data[:4] == b"RIFF" and data[8:12] == b"WEBP"
    chunks, position = [], 12
    while position + 8 <= len(data):
        size = int.from_bytes(data[position + 4 : position + 8], "little")
        chunks.append(data[position : position + 4])
        position += 8 + size + (size & 1)
    return chunks


@pytest.fixture
def photos(tmp_path):
    project, shas = photo_project(tmp_path)
    return project, shas, member("lead", project, role=Membership.Role.LEAD)


def test_a_1024_px_photo_has_a_small_webp_thumbnail_fitted_within_96_px(photos):
    project, shas, lead = photos
    response = signed_in(lead).get(thumb_url(shas[0]))
    assert response.status_code == 200
    assert response["Content-Type"] == "image/webp"
    assert response["Cache-Control"] == "private, max-age=31536000, immutable"
    data = body(response)
    with Image.open(io.BytesIO(data)) as thumb:
        assert thumb.format == "WEBP"
        assert thumb.size == (THUMBNAIL_PX, 72)  # 1024×768 fitted within 96×96
        thumb.load()
    asset = Asset.objects.get(sha256=shas[0])
    assert asset.size_bytes > 200_000
    assert len(data) < asset.size_bytes / 20, (len(data), asset.size_bytes)
    with Image.open(io.BytesIO(body(signed_in(lead).get(thumb_url(shas[1]))))) as portrait:
        assert portrait.size == (72, THUMBNAIL_PX)


def test_the_thumbnail_carries_no_metadata(photos):
    project, shas, lead = photos
    original = media_store().read(Asset.objects.get(sha256=shas[0]).file.name)
    assert SECRET.encode() in original  # what the generator left in the file
    data = body(signed_in(lead).get(thumb_url(shas[0])))
    assert SECRET.encode() not in data
    assert set(webp_chunks(data)) <= {b"VP8 ", b"VP8L", b"VP8X", b"ALPH"}  # no EXIF, XMP, ICCP
    with Image.open(io.BytesIO(data)) as thumb:
        assert not thumb.getexif()
        assert "icc_profile" not in thumb.info and "xmp" not in thumb.info


def test_the_second_request_streams_the_stored_thumbnail(photos):
    project, shas, lead = photos
    client = signed_in(lead)
    store = media_store()
    stored = thumbnail_name(shas[0])
    assert not store.exists(stored)
    first = body(client.get(thumb_url(shas[0])))
    assert store.read(stored) == first  # made once, kept under the sha and the size
    assert f"/{THUMBNAIL_PX}/" in stored and shas[0] in stored
    # What the store holds is what the next request sends: not rendered again.
    marker = io.BytesIO()
    Image.new("RGB", (3, 2), (255, 0, 0)).save(marker, "WEBP")
    store.put_bytes(stored, marker.getvalue())
    again = client.get(thumb_url(shas[0]))
    assert again.status_code == 200 and again.streaming
    assert body(again) == marker.getvalue()
    assert again["Cache-Control"] == "private, max-age=31536000, immutable"


def test_outsiders_get_the_404_of_a_missing_hash_with_the_same_queries(photos, tmp_path):
    project, shas, lead = photos
    other, _ = photo_project(tmp_path, slug="other", size=(64, 48))
    other_lead = member("other-lead", other, role=Membership.Role.LEAD)
    annotator_elsewhere = member("ann-other", other)
    member("ann-here", project)  # may see the pairs: the images answer them
    outsider = User.objects.create_user("outsider")
    clients = [signed_in(u) for u in (other_lead, annotator_elsewhere, outsider)] + [Client()]
    for client in clients:
        missing = client.get(thumb_url(MISSING))
        assert missing.status_code == 404
        for sha256 in (shas[0], "not-a-hash"):
            hidden = client.get(thumb_url(sha256))
            assert hidden.status_code == 404
            assert unmasked(body(hidden)) == unmasked(body(missing))
            assert hidden.headers.keys() == missing.headers.keys()

    # The same work: an image of another project costs the queries of a hash that exists
    # nowhere (only the hash differs), and nothing is rendered or stored for it.
    as_other_lead = signed_in(other_lead)

    def queries(sha256: str) -> list[str]:
        with CaptureQueriesContext(connection) as captured:
            assert as_other_lead.get(thumb_url(sha256)).status_code == 404
        # Only the hash, the session's expiry check and a server-side cursor's name differ.
        return [
            re.sub(
                r"_django_curs_\w+|'\d{4}-\d\d-\d\d[ T][\d:.+]+'",
                "<varies>",
                query["sql"].replace(sha256, "<sha>"),
            )
            for query in captured.captured_queries
        ]

    assert queries(shas[0]) == queries(MISSING)
    assert not media_store().exists(thumbnail_name(shas[0]))
    assert (
        signed_in(User.objects.get(username="ann-here")).get(thumb_url(shas[0])).status_code == 200
    )


def test_an_image_that_does_not_decode_has_no_thumbnail(photos):
    project, shas, lead = photos
    asset = Asset.objects.get(sha256=shas[2])
    store = media_store()
    names = (asset.file.name, clean_asset_name(asset.sha256, asset.file.name))
    for name in names:
        store.put_bytes(name, store.read(name)[:2000])  # cut inside the scan
    client = signed_in(lead)
    broken = client.get(thumb_url(shas[2]))
    assert broken.status_code == 404
    assert unmasked(body(broken)) == unmasked(body(client.get(thumb_url(MISSING))))
    assert not store.exists(thumbnail_name(shas[2]))
    for name in names:  # and files that are gone
        store.delete(name)
    assert client.get(thumb_url(shas[2])).status_code == 404


def test_concurrent_first_requests_write_the_same_complete_file(photos):
    project, shas, lead = photos
    asset = Asset.objects.get(sha256=shas[1])
    start = threading.Barrier(4)
    made: list[bytes] = []

    def render() -> None:
        start.wait()
        made.append(thumbnail_make(asset.sha256, asset.file.name))

    threads = [threading.Thread(target=render) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert len(made) == 4 and len(set(made)) == 1
    store = media_store()
    assert store.read(thumbnail_name(asset.sha256)) == made[0]
    folder = store.path(thumbnail_name(asset.sha256)).parent
    assert [p.name for p in folder.iterdir()] == [f"{asset.sha256}.webp"]  # no part left


def test_transparent_and_palette_images_keep_their_transparency(tmp_path, settings):
    from content.thumbnails import thumbnail_bytes

    palette = Image.new("P", (300, 150), 1)  # red on the left, transparent on the right
    palette.putpalette([0, 0, 0, 255, 0, 0] + [0, 0, 0] * 254)
    palette.paste(0, (150, 0, 300, 150))
    buffer = io.BytesIO()
    palette.save(buffer, "PNG", transparency=0)
    with Image.open(io.BytesIO(thumbnail_bytes(io.BytesIO(buffer.getvalue())))) as thumb:
        assert thumb.size == (96, 48) and thumb.mode == "RGBA"
        red, green, blue, alpha = thumb.getpixel((10, 24))
        assert red > 240 and green < 15 and blue < 15 and alpha == 255
        assert thumb.getpixel((86, 24))[3] == 0  # the transparent index stays clear
    grey16 = Image.new("I;16", (200, 200), 40000)
    buffer = io.BytesIO()
    grey16.save(buffer, "PNG")
    with Image.open(io.BytesIO(thumbnail_bytes(io.BytesIO(buffer.getvalue())))) as thumb:
        assert thumb.size == (96, 96)
        assert 150 < thumb.convert("L").getpixel((10, 10)) < 160  # 40000/65535 of white
    settings.ARBITER_MAX_IMAGE_PIXELS = 100 * 100  # an image above today's limit: refused
    from content.image_frames import ImageTooCostly

    with pytest.raises(ImageTooCostly):
        thumbnail_bytes(io.BytesIO(buffer.getvalue()))


def test_the_pair_browser_rows_load_thumbnails_at_their_fitted_size(photos):
    project, shas, lead = photos
    page = signed_in(lead).get(reverse("dash-pairs", args=[project.slug])).content.decode()
    tags = re.findall(r'<img src="([^"]+)" width="(\d+)" height="(\d+)"', page)
    assert sorted(tags) == sorted(
        [(thumb_url(sha), "48", "36") for sha in shas[::2]]
        + [(thumb_url(sha), "36", "48") for sha in shas[1::2]]
    )
    assert reverse("asset-file", args=[shas[0]]) + '"' not in page  # no full image
