"""No comment or docstring cites an issue number: nothing in the repository resolves one, so a
reader learns nothing from it. A comment says the reason itself instead."""

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUFFIXES = {".py", ".html", ".js", ".css"}
NAMES = {"Makefile"}
# Not the project's own text: the virtualenv, vendored libraries, run-time data, the
# translation catalogs (made from the sources), and tool caches (any folder named with a dot).
EXCLUDED = {".venv", "node_modules", "var", "locale", "__pycache__"}
EXCLUDED_UNDER = {("static", "vendor")}
CITATION = re.compile(r"\b[Ii]ssues? #?\d+")


def _sources():
    for folder, subfolders, files in os.walk(ROOT):
        here = Path(folder)
        subfolders[:] = [
            name
            for name in subfolders
            if name not in EXCLUDED
            and not name.startswith(".")
            and (here / name).relative_to(ROOT).parts not in EXCLUDED_UNDER
        ]
        for name in files:
            path = here / name
            if path.suffix in SUFFIXES or name in NAMES:
                yield path


def test_no_source_file_cites_an_issue_number():
    citations = []
    for path in _sources():
        name = path.relative_to(ROOT).as_posix()
        for number, line in enumerate(path.read_text(errors="replace").splitlines(), 1):
            if CITATION.search(line):
                citations.append(f"{name}:{number}: {line.strip()}")
    assert not citations, "say the reason instead:\n" + "\n".join(citations)


def test_the_scan_reads_the_project():
    names = {path.relative_to(ROOT).as_posix() for path in _sources()}
    assert {"manage.py", "static/theme.js", "templates/base.html", "Makefile"} <= names
    assert not any(name.startswith((".venv/", "static/vendor/", "locale/")) for name in names)
