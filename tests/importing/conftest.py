"""Fixtures of the import_pairs tests."""

from pathlib import Path

import pytest

from tests.factories import write_image
from tests.importing.helpers import BLUE, GREEN, RED


@pytest.fixture
def media_root(_media_in_tmp) -> Path:
    """MEDIA_ROOT of this test (a fresh folder, see conftest)."""
    return Path(_media_in_tmp)


@pytest.fixture
def images(tmp_path) -> Path:
    """An --images folder with three distinct PNGs and a prompt image."""
    folder = tmp_path / "images"
    write_image(folder / "a.png", RED)
    write_image(folder / "b.png", BLUE)
    write_image(folder / "c.png", GREEN)
    write_image(folder / "prompt" / "p.png", (10, 10, 10), size=(32, 32))
    return folder


@pytest.fixture
def import_temp(settings, tmp_path) -> Path:
    """ARBITER_IMPORT_TEMP_DIR of this test: every temporary folder of an import goes here,
    so a test can see that none is left behind."""
    folder = tmp_path / "import-tmp"
    folder.mkdir()
    settings.ARBITER_IMPORT_TEMP_DIR = str(folder)
    return folder


@pytest.fixture
def export_dir(tmp_path) -> Path:
    """A folder laid out like a JSONL export: images/a.png, images/b.png, images/c.png."""
    folder = tmp_path / "export"
    write_image(folder / "images" / "a.png", RED)
    write_image(folder / "images" / "b.png", BLUE)
    write_image(folder / "images" / "c.png", GREEN)
    return folder
