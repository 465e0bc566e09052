"""Animated images cost their frames: Pillow decodes each one onto the whole canvas and keeps
them all while it re-encodes (cleaning's fallback). Their frames and the pixels summed over
them are bounded from the headers before anything is decoded, on import and on cleaning; an
animation within the bounds is imported and served cleaned, frames kept. A job whose worker
keeps dying (out of memory) stops after three attempts instead of being redelivered forever."""

import contextlib
import io
import json
import shutil
import struct
import time
import zipfile

import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from PIL import Image

from content.image_cleaning import image_bytes_clean
from content.image_frames import ImageTooCostly
from content.importing.errors import ImportFailed
from content.importing.images import ImageRejected, inspect_image_bytes
from content.models import Asset, Pair
from imports.models import ImportJob
from imports.services import import_jobs
from imports.services.import_jobs import import_job_run, import_job_start
from imports.services.pair_upload import pairs_import_upload
from projects.models import Membership, Project
from tests.api.conftest import token_client
from tests.factories import image_bytes, member, mmrb2_pair, queued_pairs

pytestmark = pytest.mark.django_db

BOUNDED_SECONDS = 5  # a refusal reads headers only; the attack decoded for 50 s


# -- builders ----------------------------------------------------------------------------------


def hostile_gif(frames: int, width: int, height: int, *, stray_byte: bool = True) -> bytes:
    """A GIF whose logical screen is width×height while each frame draws a single pixel: a few
    bytes a frame, each decoded onto the whole screen. The stray byte before the trailer (which
    Pillow skips) makes the cleaner's block parser give up and re-encode, decoding every frame."""
    screen = b"GIF89a" + struct.pack("<HH", width, height) + b"\x80\x00\x00"
    palette = b"\x00\x00\x00\xff\xff\xff"
    loop = b"\x21\xff\x0bNETSCAPE2.0\x03\x01\x00\x00\x00"
    body = b""
    for index in range(frames):
        control = b"\x21\xf9\x04\x00\x0a\x00\x00\x00"  # 100 ms
        descriptor = b"\x2c" + struct.pack("<HHHH", index % width, 0, 1, 1) + b"\x00"
        # LZW, minimum code size 2: clear, colour 0 or 1, end (3 bits each).
        pixel = b"\x02\x02\x44\x01\x00" if index % 2 == 0 else b"\x02\x02\x4c\x01\x00"
        body += control + descriptor + pixel
    return screen + palette + loop + body + (b"\x00" if stray_byte else b"") + b"\x3b"


def animation(image_format: str, frames: int, size=(16, 16), **params) -> bytes:
    """A small animation made by Pillow; each frame another colour (so none is merged)."""
    images = [Image.new("RGB", size, (index * 7 % 256, 80, 160)) for index in range(frames)]
    buffer = io.BytesIO()
    images[0].save(
        buffer, image_format, save_all=True, append_images=images[1:], duration=50, **params
    )
    return buffer.getvalue()


def pairs_zip(image_a: bytes, name_a: str = "a.gif") -> bytes:
    """An MMRB2 release of one pair whose response A shows `image_a`."""
    record = mmrb2_pair("anim-1", image_a=name_a, scores=())
    del record["chosen"], record["human_annotations"]
    buffer = io.BytesIO()
    with zipfile.ZipFile(buffer, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("pairs.json", json.dumps({"pairs": [record]}))
        archive.writestr(name_a, image_a)
        archive.writestr("b.png", image_bytes((4, 5, 6)))
    return buffer.getvalue()


@pytest.fixture
def as_lead(tmp_path):
    """The lead of project `alpha` (task t2i), with a token; server errors come back as
    responses, as a client would see them."""
    task = queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=1)
    client = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    client.raise_request_exception = False
    return client


def api_import(client, archive: bytes):
    return client.post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": "mmrb2", "file": SimpleUploadedFile(
            "pairs.zip", archive)},
        format="multipart",
    )  # fmt: skip


# -- hostile animations ------------------------------------------------------------------------


def test_six_8000_square_gif_frames_with_a_stray_byte_are_refused_quickly_by_the_api(as_lead):
    started = time.monotonic()
    answer = api_import(as_lead, pairs_zip(hostile_gif(6, 8000, 8000)))
    assert answer.status_code == 400, answer.content
    assert answer.json()["detail"] == (
        "record 1: image 'a.gif' is 6 frames of 8000×8000 pixels (384000000 pixels decoded), "
        "above the decompression-bomb limit of 64000000 pixels summed over its frames"
    )
    assert time.monotonic() - started < BOUNDED_SECONDS
    assert not Pair.objects.filter(external_id="anim-1").exists()


def test_forty_1500_square_gif_frames_are_refused_by_the_upload(import_temp):
    with pytest.raises(ImportFailed, match=r"'a.gif' is 40 frames of 1500×1500 pixels"):
        pairs_import_upload(
            SimpleUploadedFile("pairs.zip", pairs_zip(hostile_gif(40, 1500, 1500))),
            project_slug="api",
            task_slug="t2i",
            file_format="mmrb2",
        )
    assert not Asset.objects.exists() and list(import_temp.iterdir()) == []


def test_the_frames_count_whatever_the_first_frame_or_the_trailer_say(settings, import_temp):
    """A GIF's frames are found past stray bytes and without a trailer, as Pillow finds them;
    a frame drawn outside the logical screen grows the canvas, as it does in Pillow."""
    settings.ARBITER_MAX_IMAGE_PIXELS = 10_000
    small_screen = bytearray(hostile_gif(3, 10, 10, stray_byte=False)[:-1])  # no trailer
    small_screen[-10:-6] = struct.pack("<HH", 200, 200)  # the last frame: 200×200 at x=2
    with pytest.raises(ImageTooCostly, match=r"3 frames of 202×200 pixels"):
        image_bytes_clean(bytes(small_screen))


@pytest.mark.parametrize(
    ("image_format", "name", "params"),
    [("PNG", "a.png", {}), ("WEBP", "a.webp", {"lossless": True}), ("GIF", "a.gif", {})],
)
def test_an_animation_of_more_frames_than_the_limit_is_refused(
    image_format, name, params, import_temp
):
    archive = pairs_zip(animation(image_format, 101, size=(2, 2), **params), name)
    with pytest.raises(ImportFailed, match=rf"'{name}' has 101 frames, above the limit of 100"):
        pairs_import_upload(
            SimpleUploadedFile("pairs.zip", archive),
            project_slug="api",
            task_slug="t2i",
            file_format="mmrb2",
        )


def test_cleaning_a_stored_hostile_gif_refuses_instead_of_decoding():
    started = time.monotonic()
    with pytest.raises(ImageTooCostly, match=r"the image is 6 frames of 8000×8000 pixels"):
        image_bytes_clean(hostile_gif(6, 8000, 8000))
    assert time.monotonic() - started < BOUNDED_SECONDS


def test_cleaning_refuses_an_animation_above_a_lowered_limit(settings):
    """Cleaning reads the limits of today, not those the image was imported under."""
    gif = hostile_gif(4, 100, 100, stray_byte=False)
    assert image_bytes_clean(gif)[1] == "image/gif"
    settings.ARBITER_MAX_IMAGE_FRAMES = 3
    with pytest.raises(ImageTooCostly, match="the image has 4 frames, above the limit of 3"):
        image_bytes_clean(gif)


# -- animations within the bounds --------------------------------------------------------------


def test_a_small_animated_gif_is_imported_and_served_cleaned_with_its_frames(as_lead):
    gif = animation("GIF", 3, comment=b"made by secret-model-7", loop=0)
    answer = api_import(as_lead, pairs_zip(gif))
    assert answer.status_code == 201, answer.content
    sha256 = Asset.objects.get(format="GIF").sha256
    served = as_lead.get(f"/api/assets/{sha256}/")
    assert served.status_code == 200 and served["Content-Type"] == "image/gif"
    data = b"".join(served.streaming_content)
    assert b"secret-model-7" not in data
    with Image.open(io.BytesIO(data)) as image:
        assert (image.n_frames, image.size) == (3, (16, 16))


def test_an_animation_whose_container_cannot_be_stripped_is_refused_not_re_encoded(as_lead):
    # Re-encoding decodes and keeps every frame; a container the strip cannot walk is the
    # kind whose frames a header walk may miscount, so it is refused at import.
    gif = animation("GIF", 3, loop=0)
    gif = gif[:-1] + b"\x00\x3b"  # a stray byte before the trailer
    answer = api_import(as_lead, pairs_zip(gif))
    assert answer.status_code == 400, answer.content
    assert "cannot be cleaned without decoding every frame" in answer.content.decode()
    assert not Asset.objects.filter(format="GIF").exists()
    with pytest.raises(ImageTooCostly):
        image_bytes_clean(gif)


def _gif_frames_hidden_from_a_header_walk(frames: int, side: int) -> bytes:
    """A GIF whose first extension goes on after its terminator, as Pillow reads it (it keeps
    reading sub-blocks), so a walk that stops there sees one frame where Pillow sees all."""
    screen = b"GIF89a" + struct.pack("<HH", side, side) + b"\x80\x00\x00" + b"\x00" * 3
    out = bytearray(screen + b"\x00\x00\x00\xff\xff\xff" + b"\x21\x01\x00")
    out += b"\x21\x01" + b"\xff" * 32 + b"\x00"
    start = len(screen) + 6 + 3 + 1 + 1
    for index in range(frames):
        landing = start + ((len(out) - start) // 256 + 1) * 256
        out += b"\xff" * (landing - len(out) + 1)
        out += b"\x21\xf9\x04\x00\x0a\x00\x00\x00\x2c" + struct.pack("<HHHH", index, 0, 1, 1)
        out += b"\x00\x02\x02\x44\x01\x00"
    end = start + ((len(out) - start) // 256 + 1) * 256
    return bytes(out + b"\xff" * (end - len(out) + 1))


def _webp_with_nested_frames(frames: int, side: int) -> bytes:
    """An animated WebP whose first ANMF chunk is declared to hold all the others: libwebp
    still finds every frame, a walk that skips whole ANMF chunks finds one."""
    data = bytearray(animation("WEBP", frames, size=(side, side), lossless=True))
    position = data.index(b"ANMF")
    data[position + 4 : position + 8] = (len(data) - position - 8).to_bytes(4, "little")
    if len(data) % 2:
        data += b"\x00"
    data[4:8] = (len(data) - 8).to_bytes(4, "little")
    return bytes(data)


@pytest.mark.parametrize(
    ("image_format", "data"),
    [
        ("GIF", _gif_frames_hidden_from_a_header_walk(12, 2500)),
        ("WEBP", _webp_with_nested_frames(20, 2000)),
    ],
    ids=["gif-extension-past-its-terminator", "webp-nested-frames"],
)
def test_frames_hidden_from_the_header_walk_are_counted_by_the_decoders_own_count(
    settings, image_format, data
):
    started = time.monotonic()
    with pytest.raises(ImageRejected, match="frames of"):
        inspect_image_bytes(
            data, "x", {image_format}, settings.ARBITER_MAX_IMAGE_PIXELS, max_frames=100
        )
    with pytest.raises(ImageTooCostly):
        image_bytes_clean(data)
    assert time.monotonic() - started < 10  # refused from headers, nothing decoded in full


# -- import jobs whose worker dies -------------------------------------------------------------


class _WorkerDied(BaseException):
    """What a worker killed mid-import looks like to its job: it never finishes."""


@pytest.fixture
def dying_job(monkeypatch, tmp_path):
    """An import job whose imports are counted; `deaths` of them kill the worker."""
    project = Project.objects.create(slug="data", name="Data")
    lead = member("boss", project, role="lead")
    job = import_job_start(
        project,
        lead,
        SimpleUploadedFile("p.zip", pairs_zip(image_bytes(), "a.png")),
        task_slug="t2i",
        file_format="mmrb2",
    )
    calls = []
    original = import_jobs.pairs_import_stored

    def importing(*args, **kwargs):
        calls.append(1)
        if len(calls) <= job.deaths:
            raise _WorkerDied
        return original(*args, **kwargs)

    monkeypatch.setattr(import_jobs, "pairs_import_stored", importing)
    job.calls = calls
    return job


def _start(job) -> None:
    """A worker takes the job (a first delivery or a redelivery after a death)."""
    with contextlib.suppress(_WorkerDied):
        import_job_run(job.pk)


def test_a_job_whose_worker_keeps_dying_stops_after_three_attempts(dying_job):
    dying_job.deaths = 10
    for attempt in (1, 2, 3):
        _start(dying_job)
        dying_job.refresh_from_db()
        assert (dying_job.status, dying_job.attempts) == ("running", attempt)
    _start(dying_job)
    dying_job.refresh_from_db()
    assert dying_job.status == "failed" and dying_job.finished_at is not None
    assert dying_job.error == "stopped after 3 attempts: the worker died while importing"
    assert len(dying_job.calls) == 3  # the fourth delivery imported nothing
    assert dying_job.file == ""  # the upload is removed, as for any refusal
    _start(dying_job)  # a late redelivery leaves the finished job alone
    dying_job.refresh_from_db()
    assert dying_job.status == "failed" and dying_job.attempts == 3


def test_a_job_whose_worker_died_once_completes_on_redelivery(dying_job):
    dying_job.deaths = 1
    _start(dying_job)
    _start(dying_job)
    dying_job.refresh_from_db()
    assert (dying_job.status, dying_job.attempts, dying_job.pairs_written) == ("done", 2, 1)
    assert ImportJob.objects.get().error == ""


# -- images stored before a limit was lowered ----------------------------------------------------


@pytest.mark.django_db(transaction=True)
def test_an_image_above_todays_limits_is_neither_served_nor_sent_but_never_a_500(
    as_lead, settings, tasks_in_process
):
    from django.contrib.auth.models import User
    from django.core.files.storage import default_storage

    from judging.models import Judge, Verdict
    from judging.services.runs import judge_run_start

    answer = api_import(as_lead, pairs_zip(animation("GIF", 3)))
    assert answer.status_code == 201, answer.content
    asset = Asset.objects.get(format="GIF")
    shutil.rmtree(default_storage.path("assets-clean"))  # the cached copies made at import
    settings.ARBITER_MAX_IMAGE_FRAMES = 2
    assert as_lead.get(f"/api/assets/{asset.sha256}/").status_code == 404
    as_lead.force_login(User.objects.get(username="lead_a"))
    assert as_lead.get(f"/assets/{asset.sha256}").status_code == 404
    pair = Pair.objects.get(response_a__content__icontains=asset.sha256)
    judge_run_start(Judge.objects.create(name="coin", backend="random"), pair.project)
    errors = Verdict.objects.filter(pair=pair).values_list("error", flat=True)
    assert errors and all("cannot send the pair's content" in error for error in errors)
