"""The import contracts of `make lint` (pyproject.toml, docs/architecture.md §3) hold, and
catch an upward import: run on a copy of the tree with one forbidden import added."""

import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
# Every package the contracts name (a new app joins them in pyproject.toml only).
PACKAGES = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["importlinter"][
    "root_packages"
]
LINT_IMPORTS = Path(sys.executable).with_name("lint-imports")


def _lint_imports(tree: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        [str(LINT_IMPORTS), "--no-cache"],
        cwd=tree,
        env={"PYTHONPATH": str(tree), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )


@pytest.fixture
def tree(tmp_path):
    for package in PACKAGES:
        shutil.copytree(ROOT / package, tmp_path / package, ignore=shutil.ignore_patterns("*.pyc"))
    shutil.copy(ROOT / "pyproject.toml", tmp_path / "pyproject.toml")
    return tmp_path


def test_the_contracts_hold(tree):
    result = _lint_imports(tree)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize(
    ("module", "line", "contract"),
    [
        # The core app reaching up to the metrics (even inside a function).
        ("annotation/probe.py", "def f():\n    from metrics import report\n", "downward"),
        ("judging/probe.py", "import dashboards.views\n", "downward"),
        # Tenancy below content below the annotation work.
        ("projects/probe.py", "from content.models import Pair\n", "downward"),
        ("content/probe.py", "from annotation.models import Rating\n", "downward"),
        ("metrics/judge_breakdowns.py", "from django.db import models\n", "plain Python"),
        # The kernel reaching into an app, or an app into the wiring above it.
        ("core/probe.py", "from annotation.models import Pair\n", "kernel at the bottom"),
        ("exports/probe.py", "from config.celery import app\n", "kernel at the bottom"),
    ],
)
def test_a_forbidden_import_breaks_a_contract(tree, module, line, contract):
    path = tree / module
    path.write_text((path.read_text() if path.exists() else "") + "\n" + line)
    result = _lint_imports(tree)
    assert result.returncode != 0
    assert contract in result.stdout and "BROKEN" in result.stdout
