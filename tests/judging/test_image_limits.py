"""Images fitted to each API's limits: what is sent is scaled or re-encoded, never
what is stored, and the verdict says what was changed; a request with more images than the
API takes fails its trial with that reason instead of a 400 on every resume."""

import base64
import io
import os

import pytest
from PIL import Image

from content.models import Asset, Pair
from devtools.fake_llm import FakeLLMServer
from imports.services.pair_import import pairs_import
from judging import image_limits
from judging.image_limits import LIMITS, ImageLimits, fit_image, needs_fitting
from judging.models import Verdict
from judging.services.judges import judge_save
from judging.services.runs import judge_run_start
from tests.factories import write_image, write_jsonl
from tests.judging.conftest import fake_connection


def anthropic_judge(server):
    judge, _ = judge_save(
        "claude-fake", project=None, backend="anthropic", model="claude-fake",
        connection=fake_connection(server, "fake-anthropic", backend="anthropic"),
        concurrency=4, requests_per_minute=60_000, timeout_seconds=5,
    )  # fmt: skip
    return judge


ANTHROPIC = LIMITS["anthropic"]


def _noise_png(size) -> bytes:
    buffer = io.BytesIO()
    Image.frombytes("RGB", size, os.urandom(size[0] * size[1] * 3)).save(buffer, "PNG")
    return buffer.getvalue()


def test_a_wide_image_is_scaled_to_the_side_limit_and_stays_png():
    buffer = io.BytesIO()
    Image.new("RGB", (9000, 40), (20, 90, 200)).save(buffer, "PNG")
    why = needs_fitting(len(buffer.getvalue()), "image/png", 9000, 40, 8000, ANTHROPIC)
    assert why == "9000×40 px is above 8000 px a side"
    fitted = fit_image(buffer.getvalue(), 8000, ANTHROPIC, why)
    assert (fitted.width, fitted.height, fitted.media_type) == (8000, 36, "image/png")
    with Image.open(io.BytesIO(fitted.data)) as image:
        assert image.size == (8000, 36)


def test_a_heavy_image_is_re_encoded_under_the_byte_limit():
    data = _noise_png((1400, 1400))  # ~5.9 MB of incompressible pixels
    assert len(data) > ANTHROPIC.max_bytes
    why = needs_fitting(len(data), "image/png", 1400, 1400, 8000, ANTHROPIC)
    fitted = fit_image(data, 8000, ANTHROPIC, why)
    assert len(fitted.data) <= ANTHROPIC.max_bytes
    assert fitted.media_type == "image/jpeg" and (fitted.width, fitted.height) == (1400, 1400)
    assert needs_fitting(100, "image/bmp", 10, 10, 8000, ANTHROPIC) == "image/bmp is not taken"


def test_more_than_twenty_images_in_an_anthropic_request_means_2000_px():
    assert (ANTHROPIC.side_for(20), ANTHROPIC.side_for(21)) == (8000, 2000)
    assert LIMITS["openai"].side_for(400) == LIMITS["openai"].max_side


@pytest.fixture
def many_images(tmp_path, _media_in_tmp):
    """One pair whose responses hold 11 images each, 2100 px wide: 22 in a pairwise request."""
    for n in range(22):
        write_image(tmp_path / f"i{n}.png", color=(n * 10, 40, 90), size=(2100, 30))
    record = {
        "id": "many",
        "prompt_source": "unit",
        "prompt_content": [["text", "Compare"]],
        "response_a": {"model_name": "m1",
                       "response_content": [["image", f"i{n}.png"] for n in range(11)]},
        "response_b": {"model_name": "m2",
                       "response_content": [["image", f"i{n}.png"] for n in range(11, 22)]},
    }  # fmt: skip
    pairs_import(write_jsonl(tmp_path / "p.jsonl", [record]), project_slug="big", task_slug="t2i",
                 images_dir=tmp_path)  # fmt: skip
    return Pair.objects.get()


def _sent_sizes(request) -> list[tuple[int, int]]:
    sizes = []
    for block in request["messages"][0]["content"]:
        if block["type"] == "image":
            data = base64.b64decode(block["source"]["data"])
            with Image.open(io.BytesIO(data)) as image:
                sizes.append(image.size)
    return sizes


@pytest.mark.django_db(transaction=True)
def test_an_anthropic_request_with_22_images_sends_them_at_2000_px(many_images):
    server = FakeLLMServer()
    server.start()
    try:
        judge = anthropic_judge(server)
        judge_run_start(judge, many_images.project)
        assert len(server.requests) == 2  # both orders
        for request in server.requests:
            assert _sent_sizes(request) == [(2000, 29)] * 22
        verdict = Verdict.objects.get(order="forward")
        assert verdict.choice == "A" and len(verdict.images_adapted) == 22
        change = verdict.images_adapted[0]
        assert change["why"] == "2100×30 px is above 2000 px a side"
        assert (change["stored"]["width"], change["sent"]["width"]) == (2100, 2000)
        # Storage keeps the originals.
        assert {(a.width, a.height) for a in Asset.objects.all()} == {(2100, 30)}
    finally:
        server.stop()


@pytest.mark.django_db(transaction=True)
def test_more_images_than_the_api_takes_fail_the_trial_without_a_call(many_images, monkeypatch):
    small = ImageLimits(max_bytes=ANTHROPIC.max_bytes, max_side=8000, max_images=20)
    monkeypatch.setitem(image_limits.LIMITS, "anthropic", small)
    server = FakeLLMServer()
    server.start()
    try:
        judge = anthropic_judge(server)
        judge_run_start(judge, many_images.project)
        assert server.served == 0
        errors = set(Verdict.objects.values_list("error", flat=True))
        assert errors == {
            "cannot send the pair's content: the request would hold 22 images; the API takes "
            "at most 20"
        }
    finally:
        server.stop()
