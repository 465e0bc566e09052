"""Builders and page measures of the annotate page's tests on realistic content: the demo's
four tasks (drawn by demo/pairs.py as `manage.py demo` draws them), MJ-Bench's 1024 px photos
and MMRB2's long reasoning and interleaved pairs (from /work/shared/datasets; the tests skip
when those files are absent)."""

import json
import subprocess
import sys
from pathlib import Path

import pytest
from django.contrib.auth.models import User

from demo.pairs import TASKS, build_records, import_missing
from demo.seed import _project_and_tasks
from imports.services.pair_import import pairs_import
from projects.models import Membership, Project
from tests.conftest import SHARED_MMRB2

MJBENCH = SHARED_MMRB2.parent / "mjbench" / "quality" / "human"
DESKTOP = {"width": 1366, "height": 768}
PHONE = {"width": 390, "height": 844}
SMALL_PHONE = {"width": 360, "height": 740}
VIEWPORTS = [DESKTOP, PHONE, SMALL_PHONE]


def _annotator(project: Project, username: str = "annotator1") -> User:
    user = User.objects.create_user(username)
    Membership.objects.create(user=user, project=project, role=Membership.Role.ANNOTATOR)
    return user


def demo_annotator(folder: Path, pairs: int = 2) -> User:
    """The demo project and its four tasks, `pairs` queued pairs each, drawn as the demo draws
    them, on the demo's 7-point scale; an annotator of it."""
    project = _project_and_tasks()
    for slug in TASKS:
        import_missing(project, slug, folder, build_records(slug, folder, pairs), queue=True)
    Project.objects.filter(pk=project.pk).update(scale_points=7)  # the demo's, whatever the files'
    return _annotator(project)


def mjbench_annotator(folder: Path, pairs: int = 2) -> User:
    """MJ-Bench's first human-quality pairs (a 1024 × 1024 photo and its edited face), queued
    in a project of their own; an annotator of it."""
    if not MJBENCH.is_dir():
        pytest.skip(f"the MJ-Bench files are not at {MJBENCH}")
    rows = json.loads((MJBENCH / "captions_human.json").read_text())[:pairs]
    path = folder / "mjbench.json"
    path.write_text(json.dumps(rows))
    pairs_import(
        path,
        project_slug="mj",
        task_slug="quality",
        file_format="mjbench",
        images_dir=MJBENCH / "examples_human",
        as_candidates=True,
        queue=True,
    )
    return _annotator(Project.objects.get(slug="mj"), "mj-annotator")


def _longest(pairs: list[dict], key) -> dict:
    return max(pairs, key=key)


def _text_length(pair: dict) -> int:
    parts = pair["response_a"]["response_content"] + pair["response_b"]["response_content"]
    return sum(len(value) for kind, value in parts if kind == "text")


def _image_count(pair: dict) -> int:
    parts = pair["response_a"]["response_content"] + pair["response_b"]["response_content"]
    return sum(kind == "image" for kind, _ in parts)


def mmrb2_annotator(folder: Path) -> User:
    """Two MMRB2 pairs to rate anew (their labels left out): the reasoning pair with the most
    text and the interleaved pair with the most images, with MMRB2's own placeholder images
    (the release ships none); an annotator of them."""
    if not SHARED_MMRB2.is_dir():
        pytest.skip(f"the MMRB2 files are not at {SHARED_MMRB2}")
    chosen = []
    for name, key in (("reasoning", _text_length), ("interleaved", _image_count)):
        pairs = json.loads((SHARED_MMRB2 / f"{name}_response_only.json").read_text())["pairs"]
        pair = _longest(pairs, key)
        chosen.append({k: v for k, v in pair.items() if k not in ("chosen", "human_annotations")})
    path = folder / "mmrb2.json"
    path.write_text(json.dumps({"pairs": chosen}))
    images = folder / "mmrb2-images"
    subprocess.run(
        [sys.executable, str(SHARED_MMRB2 / "make_placeholder_images.py"), str(images), str(path)],
        check=True,
        capture_output=True,
    )
    pairs_import(
        path, project_slug="mmrb2", task_slug="mixed", file_format="mmrb2", images_dir=images,
        queue=True,
    )  # fmt: skip
    return _annotator(Project.objects.get(slug="mmrb2"), "mmrb2-annotator")


# Whether each response begins on the first screen: its heading and the start of its first
# part (a line of text, the top of an image) in the window, above the rating dock.
BEGINNINGS = """() => {
    const dock = document.querySelector('#workspace .dock').getBoundingClientRect();
    return ['left', 'right'].map(side => {
        const card = document.getElementById(side);
        const heading = card.querySelector('h2').getBoundingClientRect();
        const first = card.querySelector('.response-body > *').getBoundingClientRect();
        return {side: side, heading: heading.top >= 0 && heading.bottom <= dock.top,
                content: first.top >= 0 && first.top + Math.min(first.height, 20) <= dock.top,
                dockTop: dock.top, firstTop: first.top};
    });
}"""

# The header's lines: its visible items grouped by the rows they sit on.
HEADER_LINES = """() => {
    const items = Array.from(document.querySelectorAll(
        'header.topbar > .brand, header.topbar > .theme-switch, header.topbar > .language-switch,'
        + ' header.topbar > nav.account > *'))
        .map(e => e.getBoundingClientRect()).filter(r => r.width > 0 && r.height > 0)
        .sort((a, b) => a.top - b.top);
    let lines = 0, bottom = -Infinity;
    for (const r of items) { if (r.top >= bottom - 2) { lines += 1; bottom = r.bottom; }
                             else bottom = Math.max(bottom, r.bottom); }
    return lines;
}"""

# Each response image and the visible box of its response, on the screen as it is.
RESPONSE_IMAGES = """() => Array.from(
    document.querySelectorAll('#workspace .response-body a.zoomable img')).map(img => {
        const body = img.closest('.response-body');
        const r = img.getBoundingClientRect(), b = body.getBoundingClientRect();
        const top = b.top + body.clientTop;
        return {alt: img.alt, top: r.top, bottom: r.bottom, height: r.height,
                boxTop: top, boxBottom: top + body.clientHeight, boxHeight: body.clientHeight};
    })"""


def whole(image) -> bool:
    """Inside its box, within a pixel (a box scrolls by whole pixels, the layout has fractions)."""
    return image["top"] >= image["boxTop"] - 1 and image["bottom"] <= image["boxBottom"] + 1


def out_of_sight(image) -> bool:
    return image["top"] >= image["boxBottom"] - 0.5 or image["bottom"] <= image["boxTop"] + 0.5


def wait_for_images(page, timeout: int = 15_000) -> None:
    page.wait_for_function(
        """() => Array.from(document.querySelectorAll('#workspace a.zoomable img'))
            .filter(img => { // lazy images out of their box's sight load only when scrolled to
                const box = img.closest('.response-body, .prompt').getBoundingClientRect();
                const r = img.getBoundingClientRect();
                return r.bottom > box.top && r.top < box.bottom; })
            .every(img => img.complete && img.naturalWidth > 0)""",
        timeout=timeout,
    )
