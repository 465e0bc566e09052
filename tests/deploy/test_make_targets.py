"""The Makefile's targets, read with `make -n` (nothing runs): the demo installs only the
runtime dependencies and serves where HOST says, printing that address; the test and lint
targets install the development tools too, also from a fresh clone, and the reference
libraries the tests compare against without their heavy declared dependencies."""

import shutil
import subprocess
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]

pytestmark = pytest.mark.skipif(shutil.which("make") is None, reason="needs make")


def _plan(target: str, venv: Path, *variables: str) -> list[str]:
    """The commands `make TARGET` would run with a virtualenv at `venv`."""
    command = ["make", "-n", "--no-print-directory", "-C", str(REPO_ROOT), target]
    done = subprocess.run(
        [*command, f"VENV={venv}", *variables],
        capture_output=True, text=True, check=True, timeout=60,
    )  # fmt: skip
    return done.stdout.splitlines()


def _installs(plan: list[str]) -> list[str]:
    return [line.split("pip install --quiet", 1)[1].strip() for line in plan
            if "pip install --quiet" in line and "--upgrade pip" not in line]  # fmt: skip


# The dev extras with what the compared code imports; then the two reference libraries alone
# (their declared dependencies pull transformers and numba, which the comparisons never use).
DEV = ["-e '.[dev,compare]'", "--no-deps 'crowd-kit>=1.4.2,<2' 'ppi-python>=0.2.3,<0.3'"]


def test_the_demo_installs_the_runtime_only_and_serves_at_host(tmp_path):
    plan = _plan("demo", tmp_path / "venv", "HOST=0.0.0.0:9000")
    assert _installs(plan) == ["-e ."]
    assert any(line.endswith("manage.py demo --host 0.0.0.0:9000") for line in plan)
    assert plan[-1].endswith("manage.py runserver 0.0.0.0:9000")


@pytest.mark.parametrize("target", ["test", "lint", "install"])
def test_the_tool_targets_install_the_dev_extras_from_a_fresh_clone(tmp_path, target):
    plan = _plan(target, tmp_path / "venv")
    assert any(" -m venv " in line for line in plan)  # the virtualenv is made first
    assert _installs(plan) == ["-e .", *DEV]


def test_a_runtime_only_virtualenv_gets_the_dev_extras_for_the_tests(tmp_path):
    venv = tmp_path / "venv"
    (venv / "bin").mkdir(parents=True)
    (venv / "bin" / ".installed-runtime").touch()  # what `make demo` left, newer than pyproject
    plan = _plan("test", venv)
    assert _installs(plan) == DEV
    assert not any(" -m venv " in line for line in plan)
    assert any(" -m pytest " in line for line in plan)
