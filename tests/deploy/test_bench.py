"""The benchmarks are a package run from the project root as `python -m bench.<name>`
(`make bench`), and the wheel leaves it out."""

import subprocess
import sys
import tomllib
from fnmatch import fnmatchcase
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
ENTRY_POINTS = ["importing", "annotate", "load", "judges", "judge_workers", "dashboards", "export"]


@pytest.mark.parametrize("name", ENTRY_POINTS)
def test_each_benchmark_starts_as_a_module(name):
    done = subprocess.run(
        [sys.executable, "-m", f"bench.{name}", "--help"],
        cwd=REPO_ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.startswith(f"usage: python -m bench.{name} ")
    assert "--postgres" in done.stdout


def test_the_benchmarks_are_not_installed():
    """setuptools' package discovery matches these patterns with fnmatch."""
    pyproject = tomllib.loads((REPO_ROOT / "pyproject.toml").read_text())
    include = pyproject["tool"]["setuptools"]["packages"]["find"]["include"]
    assert any(fnmatchcase("annotation", pattern) for pattern in include)
    for package in ("bench", "bench.common", "devtools", "tests"):
        assert not any(fnmatchcase(package, pattern) for pattern in include), package
