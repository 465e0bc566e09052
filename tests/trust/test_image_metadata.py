"""Images reach annotators, leads' pages and judges without the metadata that names the model
that made them (PNG text chunks, EXIF, XMP, C2PA), with the ICC profile kept and the EXIF
orientation applied; exports keep the original bytes."""

import base64
import contextlib
import hashlib
import io
import struct
import zlib

import pytest
from django.test import Client
from PIL import Image, ImageChops, ImageCms, ImageOps, ImageStat, PngImagePlugin

from content.image_cleaning import image_bytes_clean
from content.models import Asset, Pair
from devtools.fake_llm import FakeLLMServer
from imports.services.pair_import import pairs_import
from judging.contents import PairContents, Trial
from judging.models import Judge
from judging.prompts import run_template_stored
from judging.services.runs import judge_run_start
from projects.models import Membership, Project
from tests.api.conftest import token_client
from tests.exporting.helpers import files_under, run_export
from tests.factories import member, mmrb2_pair, write_jsonl
from tests.judging.conftest import _tasks_in_process, openai_judge  # noqa: F401

# What generators write into their files; none of it may reach an annotator or a judge.
SECRETS = [b"sdxl", b"SecretGen", b"xmp-secret", b"c2pa-secret", b"comment-secret", b"zipped"]
PNG_METADATA_CHUNKS = {b"tEXt", b"iTXt", b"zTXt", b"eXIf", b"caBX"}


_ICC = ImageCms.ImageCmsProfile(ImageCms.createProfile("sRGB")).tobytes()  # dated: made once


def _icc() -> bytes:
    return _ICC


def _pattern(size=(40, 30)) -> Image.Image:
    """Distinct pixels everywhere, so that a rotation or a re-encode shows."""
    image = Image.new("RGB", size)
    width, height = size
    image.putdata(
        [(x * 6 % 256, y * 8 % 256, (x + 2 * y) * 3 % 256)
         for y in range(height) for x in range(width)]
    )  # fmt: skip
    return image


def _xmp() -> bytes:
    return (
        b'<x:xmpmeta xmlns:x="adobe:ns:meta/"><rdf:RDF>'
        b'<rdf:Description CreatorTool="xmp-secret"/></rdf:RDF></x:xmpmeta>'
    )


def _png_chunk(kind: bytes, payload: bytes) -> bytes:
    crc = zlib.crc32(kind + payload)
    return struct.pack(">I", len(payload)) + kind + payload + struct.pack(">I", crc)


def png_with_metadata() -> bytes:
    """tEXt, iTXt, zTXt (compressed: its secret shows only once inflated), EXIF, XMP, a C2PA
    chunk and an ICC profile."""
    info = PngImagePlugin.PngInfo()
    info.add_text("parameters", "Steps: 20, Model: sdxl")
    info.add_itxt("Description", "made by SecretGen", lang="en", tkey="d")
    info.add_text("Comment", "comment-secret zipped", zip=True)
    info.add_itxt("XML:com.adobe.xmp", _xmp().decode())
    exif = Image.Exif()
    exif[0x0131] = "SecretGen 1.0"  # Software
    buffer = io.BytesIO()
    _pattern().save(buffer, "PNG", pnginfo=info, exif=exif, icc_profile=_icc())
    data = buffer.getvalue()
    end = data.rindex(b"IEND") - 4
    return data[:end] + _png_chunk(b"caBX", b"jumb c2pa-secret") + data[end:]


def _segment(marker: int, payload: bytes) -> bytes:
    return bytes((0xFF, marker)) + struct.pack(">H", len(payload) + 2) + payload


def jpeg_with_metadata(orientation=6) -> bytes:
    """EXIF (Software, Orientation), an XMP APP1, a C2PA (JUMBF) APP11, a comment, an ICC
    profile."""
    exif = Image.Exif()
    exif[0x0131] = "SecretGen 1.0"
    exif[0x0112] = orientation
    buffer = io.BytesIO()
    _pattern().save(
        buffer, "JPEG", exif=exif, icc_profile=_icc(), quality=90, comment=b"comment-secret"
    )
    data = buffer.getvalue()
    xmp = _segment(0xE1, b"http://ns.adobe.com/xap/1.0/\x00" + _xmp())
    jumbf = _segment(0xEB, b"JP\x00\x01\x00\x00\x00\x01jumbc2pa c2pa-secret")
    return data[:2] + xmp + jumbf + data[2:]


def _png_chunk_kinds(data: bytes) -> list[bytes]:
    kinds, position = [], 8
    while position < len(data):
        length = int.from_bytes(data[position : position + 4], "big")
        kinds.append(data[position + 4 : position + 8])
        position += 12 + length
    return kinds


def _jpeg_header_markers(data: bytes) -> list[int]:
    """The markers before the first scan."""
    markers, position = [], 2
    while data[position + 1] != 0xDA:
        markers.append(data[position + 1])
        position += 2 + int.from_bytes(data[position + 2 : position + 4], "big")
    return markers


def _inflated(data: bytes) -> bytes:
    """The bytes with every zTXt/iTXt payload inflated too, so compressed text is seen."""
    found = [data]
    for start in range(len(data)):
        if data[start : start + 2] == b"\x78\x9c":
            with contextlib.suppress(zlib.error):
                found.append(zlib.decompressobj().decompress(data[start:]))
    return b"".join(found)


def assert_clean(data: bytes) -> None:
    seen = _inflated(data)
    assert [secret for secret in SECRETS if secret in seen] == []


# -- the cleaning itself -------------------------------------------------------------------------


def test_png_loses_text_exif_xmp_and_c2pa_and_keeps_icc_and_pixels():
    original = png_with_metadata()
    assert {b"sdxl", b"SecretGen", b"xmp-secret", b"c2pa-secret"} <= {
        s for s in SECRETS if s in _inflated(original)
    }
    cleaned, media_type = image_bytes_clean(original)
    assert media_type == "image/png"
    assert_clean(cleaned)
    assert not PNG_METADATA_CHUNKS & set(_png_chunk_kinds(cleaned))
    with Image.open(io.BytesIO(cleaned)) as image, Image.open(io.BytesIO(original)) as before:
        assert image.info.get("icc_profile") == _icc()
        assert not image.getexif()
        assert image.size == before.size
        assert ImageChops.difference(image.convert("RGB"), before.convert("RGB")).getbbox() is None


def test_jpeg_loses_exif_xmp_c2pa_and_comment_with_orientation_applied():
    original = jpeg_with_metadata(orientation=6)
    cleaned, media_type = image_bytes_clean(original)
    assert media_type == "image/jpeg"
    assert_clean(cleaned)
    assert not {0xE1, 0xEB, 0xFE} & set(_jpeg_header_markers(cleaned))  # APP1, APP11, COM
    with Image.open(io.BytesIO(cleaned)) as image, Image.open(io.BytesIO(original)) as before:
        assert image.size == (30, 40)  # 40×30 turned a quarter: width and height swapped
        assert 0x0112 not in image.getexif()
        assert image.info.get("icc_profile") == _icc()
        upright = ImageOps.exif_transpose(before).convert("RGB")
        mean_error = ImageStat.Stat(ImageChops.difference(image.convert("RGB"), upright)).mean
        assert max(mean_error) < 4  # one more JPEG generation, with the original's tables


def test_upright_jpeg_is_stripped_without_reencoding():
    original = jpeg_with_metadata(orientation=1)
    cleaned, _ = image_bytes_clean(original)
    assert_clean(cleaned)
    scan = original.index(b"\xff\xda")
    assert cleaned.endswith(original[scan:])  # scans byte for byte: no generation lost
    with Image.open(io.BytesIO(cleaned)) as image:
        assert image.info.get("icc_profile") == _icc()


def test_png_orientation_is_applied_losslessly():
    exif = Image.Exif()
    exif[0x0131] = "SecretGen 1.0"
    exif[0x0112] = 6
    buffer = io.BytesIO()
    _pattern().save(buffer, "PNG", exif=exif, icc_profile=_icc())
    cleaned, _ = image_bytes_clean(buffer.getvalue())
    assert_clean(cleaned)
    with Image.open(io.BytesIO(cleaned)) as image, Image.open(buffer) as before:
        assert image.size == (30, 40) and not image.getexif()
        assert image.info.get("icc_profile") == _icc()
        upright = ImageOps.exif_transpose(before)
        assert ImageChops.difference(image.convert("RGB"), upright.convert("RGB")).getbbox() is None


@pytest.mark.parametrize("lossless", [True, False])
def test_webp_loses_exif_and_xmp(lossless):
    exif = Image.Exif()
    exif[0x0131] = "SecretGen 1.0"
    buffer = io.BytesIO()
    _pattern().save(buffer, "WEBP", exif=exif, xmp=_xmp(), icc_profile=_icc(), lossless=lossless)
    original = buffer.getvalue()
    assert b"SecretGen" in original and b"xmp-secret" in original
    cleaned, media_type = image_bytes_clean(original)
    assert media_type == "image/webp"
    assert_clean(cleaned)
    with Image.open(io.BytesIO(cleaned)) as image, Image.open(buffer) as before:
        assert image.info.get("icc_profile") == _icc()
        assert "exif" not in image.info and "xmp" not in image.info
        assert ImageChops.difference(image.convert("RGB"), before.convert("RGB")).getbbox() is None


def test_gif_loses_comments_and_xmp_and_keeps_its_frames():
    frames = [_pattern().convert("P"), _pattern().rotate(180).convert("P")]
    buffer = io.BytesIO()
    frames[0].save(
        buffer, "GIF", save_all=True, append_images=frames[1:], loop=0, duration=80,
        comment=b"comment-secret",
    )  # fmt: skip
    data = buffer.getvalue()
    # An XMP application extension (Pillow does not write one) before the trailer.
    xmp = b"\x21\xff\x0bXMP DataXMP" + bytes((len(_xmp()),)) + _xmp() + b"\x00"
    original = data[:-1] + xmp + data[-1:]
    cleaned, media_type = image_bytes_clean(original)
    assert media_type == "image/gif"
    assert_clean(cleaned)
    with Image.open(io.BytesIO(cleaned)) as image:
        assert image.n_frames == 2 and image.info["loop"] == 0 and image.info["duration"] == 80


def test_an_image_without_metadata_is_unchanged():
    buffer = io.BytesIO()
    _pattern().save(buffer, "PNG")
    assert image_bytes_clean(buffer.getvalue())[0] == buffer.getvalue()


# -- what is served and sent ---------------------------------------------------------------------


@pytest.fixture
def dirty(tmp_path):
    """Project `dirty` with one labelled pair whose responses are the PNG and the JPEG with
    metadata; its annotator (who may be assigned it) and its lead."""
    folder = tmp_path / "dirty-images"
    folder.mkdir()
    (folder / "a.png").write_bytes(png_with_metadata())
    (folder / "b.jpg").write_bytes(jpeg_with_metadata(orientation=6))
    source = write_jsonl(
        tmp_path / "dirty.jsonl", [mmrb2_pair("d1", image_a="a.png", image_b="b.jpg")]
    )
    pairs_import(source, project_slug="dirty", task_slug="t2i", images_dir=folder)
    project = Project.objects.get(slug="dirty")
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    originals = {
        "a": hashlib.sha256((folder / "a.png").read_bytes()).hexdigest(),
        "b": hashlib.sha256((folder / "b.jpg").read_bytes()).hexdigest(),
    }
    annotator = member("dirty_annotator", project)
    lead = member("dirty_lead", project, role=Membership.Role.LEAD)
    return project, originals, annotator, lead


def _fetch_both(user, sha256: str) -> list[bytes]:
    page = Client()
    page.force_login(user)
    served = page.get(f"/assets/{sha256}")
    api = token_client(user).get(f"/api/assets/{sha256}/")
    assert served.status_code == api.status_code == 200
    return [b"".join(served.streaming_content), b"".join(api.streaming_content)]


@pytest.mark.django_db
def test_served_images_are_clean_and_stored_ones_are_not(dirty, settings):
    project, originals, annotator, lead = dirty
    for user in (annotator, lead):
        for key in ("a", "b"):
            for body in _fetch_both(user, originals[key]):
                assert_clean(body)
                with Image.open(io.BytesIO(body)) as image:
                    assert image.info.get("icc_profile") == _icc()
                    assert not image.getexif()
                    assert image.size == ((40, 30) if key == "a" else (30, 40))
    # The stored originals are untouched (they are what exports ship).
    for sha256 in originals.values():
        stored = Asset.objects.get(sha256=sha256).file.read()
        assert hashlib.sha256(stored).hexdigest() == sha256
        assert b"SecretGen" in stored
    # One cleaned copy per image, made once.
    copies = [p for p in (settings.MEDIA_ROOT / "assets-clean").rglob("*") if p.is_file()]
    assert sorted(p.name.split(".")[0] for p in copies) == sorted(originals.values())


@pytest.mark.django_db
def test_the_import_makes_the_cleaned_copies_before_anyone_asks(dirty, settings):
    """A judge run right after an import must not clean every image it sends (the first run
    was at 72 % of a warm one's pace in bench.judges): the import makes the copies."""
    _project, originals, _annotator, _lead = dirty
    copies = [p for p in (settings.MEDIA_ROOT / "assets-clean").rglob("*") if p.is_file()]
    assert sorted(p.name.split(".")[0] for p in copies) == sorted(originals.values())
    for copy in copies:
        assert_clean(copy.read_bytes())


@pytest.mark.django_db
def test_exports_keep_the_original_bytes(dirty, tmp_path):
    project, originals, annotator, lead = dirty
    _fetch_both(lead, originals["a"])  # a cleaned copy exists: the export must not take it
    Pair.objects.filter(project=project).update(status=Pair.Status.KEPT)
    out = tmp_path / "export"
    run_export(project, out)
    exported = {
        hashlib.sha256((out / name).read_bytes()).hexdigest()
        for name in files_under(out)
        if name.endswith((".png", ".jpg"))
    }
    assert set(originals.values()) <= exported


def _sent_images(parts) -> list[tuple[str, bytes]]:
    return [(value[0], base64.b64decode(value[1])) for kind, value in parts if kind == "image"]


def _assert_judge_images_clean(sent) -> None:
    assert {media_type for media_type, _ in sent} == {"image/png", "image/jpeg"}
    for _media_type, data in sent:
        assert_clean(data)
        with Image.open(io.BytesIO(data)) as image:
            assert image.info.get("icc_profile") == _icc()
            assert image.size in ((40, 30), (30, 40)) and not image.getexif()


@pytest.mark.django_db
def test_the_judge_message_is_built_from_clean_images(dirty):
    project, originals, annotator, lead = dirty
    pair = Pair.objects.select_related("prompt", "response_a", "response_b").get(project=project)
    trial = Trial(pair.pk, "forward", 0)
    template = run_template_stored(Judge(name="x", backend="openai"), "t2i", project)
    [message], adapted = PairContents([pair], [trial], "openai").messages(template, trial)
    _assert_judge_images_clean(_sent_images(message.parts))
    assert adapted == []  # small images: sent as they are (cleaned)


@pytest.mark.django_db(transaction=True)
def test_judges_receive_clean_images(dirty):
    project, originals, annotator, lead = dirty
    server = FakeLLMServer()
    server.start()
    try:
        judge = openai_judge(server)
        judge_run_start(judge, project)
    finally:
        server.stop()
    assert server.requests
    sent = []
    for request in server.requests:
        for part in request["messages"][0]["content"]:
            if part["type"] == "image_url":
                header, encoded = part["image_url"]["url"].split(",", 1)
                media_type = header.removeprefix("data:").removesuffix(";base64")
                sent.append((media_type, base64.b64decode(encoded)))
    _assert_judge_images_clean(sent)


def _mpo(orientation: int = 1) -> bytes:
    """A phone's JPEG: two frames in an MPO (Pillow writes the MPF index), EXIF on the first."""
    exif = Image.Exif()
    exif[0x0112] = orientation
    exif[0x0131] = "SecretGen"
    buffer = io.BytesIO()
    first, second = _pattern(), Image.new("RGB", (40, 30), (255, 0, 0))
    first.save(buffer, "MPO", save_all=True, append_images=[second], exif=exif.tobytes())
    return buffer.getvalue()


@pytest.mark.django_db
@pytest.mark.parametrize("orientation", [1, 6])
def test_a_phone_mpo_is_a_jpeg_of_its_first_frame(orientation, tmp_path, settings):
    settings.MEDIA_ROOT = str(tmp_path / "media")
    original = _mpo(orientation)
    with Image.open(io.BytesIO(original)) as image:
        assert image.format == "MPO" and image.n_frames == 2
    (tmp_path / "phone.jpg").write_bytes(original)
    record = mmrb2_pair("phone", image_a="phone.jpg", image_b="phone.jpg")
    pairs_import(write_jsonl(tmp_path / "p.jsonl", [record]), project_slug="mpo",
                 task_slug="t2i", images_dir=tmp_path)  # fmt: skip
    asset = Asset.objects.get()
    assert asset.format == "JPEG" and asset.content_type == "image/jpeg"
    assert asset.file.read() == original  # stored as it came; exports keep it
    cleaned, media_type = image_bytes_clean(original)
    assert media_type == "image/jpeg"
    assert_clean(cleaned)
    with Image.open(io.BytesIO(cleaned)) as image:
        assert image.format == "JPEG" and getattr(image, "n_frames", 1) == 1
        assert image.size == ((30, 40) if orientation == 6 else (40, 30))
        assert image.convert("RGB").getpixel((0, 0))[0] < 200  # the pattern, not the red frame
