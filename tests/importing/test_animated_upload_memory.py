"""Hostile animations, each uploaded in a child process whose peak
memory (VmHWM) is read when it ends, as test_upload_memory.py does for the hostile data files:
a zip holding a GIF of 6 frames at 8000×8000 with a stray byte before its trailer (accepted
after ~55 s while the process grew to ~2.5 GB, before the frames were bounded) and a GIF of
40 frames at 1500×1500 (~13 s, ~360 MB). Both are now refused from their headers."""

import json
from pathlib import Path

import pytest

from projects.models import Project, Task
from tests.importing.test_animated_images import hostile_gif, pairs_zip
from tests.importing.test_upload_memory import PEAK_BOUND_MB, import_in_child

REFUSED_WITHIN_SECONDS = 5  # headers only; the attack decoded for close to a minute


@pytest.fixture
def target(db):
    """Project `mem`, task `t`: where test_upload_memory.py's child process imports."""
    Task.objects.create(project=Project.objects.create(slug="mem", name="mem"), slug="t", name="t")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
@pytest.mark.django_db(transaction=True)  # the child process reads the committed project
@pytest.mark.parametrize(
    ("frames", "side"), [(6, 8000), (40, 1500)], ids=["6x8000-stray-byte", "40x1500"]
)
def test_a_hostile_animation_is_refused_in_bounded_memory_and_time(tmp_path, target, frames, side):
    upload = tmp_path / "pairs.zip"
    upload.write_bytes(pairs_zip(hostile_gif(frames, side, side)))
    figure = import_in_child("mmrb2", upload)
    print(json.dumps({f"{frames}x{side}": figure}))  # the figures SECURITY.md quotes (pytest -s)
    assert str(figure["outcome"]).startswith(
        f"record 1: image 'a.gif' is {frames} frames of {side}×{side} pixels"
    ), figure
    assert figure["peak_mb"] < PEAK_BOUND_MB, figure
    assert figure["seconds"] < REFUSED_WITHIN_SECONDS, figure
