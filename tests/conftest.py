"""Shared fixtures, and the rule for tests that need real services.

Tests marked `postgres`, `redis` or `browser` skip with a reason when the service is not
available, except in CI (CI=true), where a missing service fails them: CI must run them.
"""

import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.db import connection

SHARED_MMRB2 = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mmrb2"
IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")


def _missing_service(marker: str) -> str | None:
    if marker == "postgres" and connection.vendor != "postgresql":
        return "needs PostgreSQL: set DATABASE_URL=postgres://..."
    if marker == "redis" and not django_settings.REDIS_URL:
        return "needs Redis: set REDIS_URL=redis://..."
    if marker == "browser":
        if not Path(CHROMIUM).exists():
            return f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "needs the playwright package"
    return None


def pytest_runtest_setup(item):
    for marker in ("postgres", "redis", "browser"):
        if item.get_closest_marker(marker) is None:
            continue
        reason = _missing_service(marker)
        if reason and IN_CI:
            pytest.fail(f"CI must run this test but it {reason}", pytrace=False)
        if reason:
            pytest.skip(reason)
    if item.get_closest_marker("mmrb2") and not SHARED_MMRB2.is_dir():
        pytest.skip(f"the MMRB2 files are not at {SHARED_MMRB2}")


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes media into its own folder, never into the checkout."""
    settings.MEDIA_ROOT = tmp_path / "media"
    yield settings.MEDIA_ROOT
    shutil.rmtree(tmp_path / "media", ignore_errors=True)


@pytest.fixture(scope="session")
def mmrb2_images(tmp_path_factory):
    """Placeholder images for every file the MMRB2 pair files name (their own script)."""
    import subprocess
    import sys

    folder = tmp_path_factory.mktemp("mmrb2-images")
    subprocess.run(
        [sys.executable, str(SHARED_MMRB2 / "make_placeholder_images.py"), str(folder)],
        check=True,
        capture_output=True,
    )
    return folder
