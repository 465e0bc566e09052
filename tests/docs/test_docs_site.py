"""The documentation: a README a newcomer reads in minutes, relative links that resolve on
GitHub as in the site, and a site built strictly from docs/ that loads nothing from another
host."""

import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
DOCS = ROOT / "docs"
LINK = re.compile(r"\[[^\]]*\]\(([^)\s]+)\)")
FENCE = re.compile(r"^```.*?^```", re.M | re.S)
MKDOCS = Path(sys.executable).parent / "mkdocs"


def markdown_files() -> list[Path]:
    return [
        ROOT / "README.md",
        ROOT / "SECURITY.md",
        ROOT / "api" / "README.md",
        *sorted(DOCS.rglob("*.md")),
    ]


def slug(heading: str) -> str:
    """GitHub's and MkDocs' anchor of a heading (what the docs' headings use)."""
    text = re.sub(r"[`*]", "", heading.strip().lower())
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def anchors(path: Path) -> set[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    return {slug(h) for h in re.findall(r"^#{1,6} (.+)$", text, re.M)}


def relative_links(path: Path) -> list[str]:
    text = FENCE.sub("", path.read_text(encoding="utf-8"))
    text = re.sub(r"`[^`\n]*`", "", text)
    return [t for t in LINK.findall(text) if not re.match(r"[a-z]+:", t)]


def test_the_readme_is_short():
    assert (ROOT / "README.md").stat().st_size < 25 * 1024


@pytest.mark.parametrize("path", markdown_files(), ids=lambda p: str(p.relative_to(ROOT)))
def test_every_relative_link_resolves(path):
    for target in relative_links(path):
        file, _, anchor = target.partition("#")
        resolved = (path.parent / file).resolve() if file else path
        assert resolved.exists(), f"{path.name}: {target}"
        if anchor and resolved.suffix == ".md":
            assert anchor in anchors(resolved), f"{path.name}: {target}"


def test_the_link_check_sees_a_broken_anchor(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("# Title\n\n[there](#nowhere) [here](#title)\n")
    assert relative_links(page) == ["#nowhere", "#title"]
    assert "nowhere" not in anchors(page) and "title" in anchors(page)


def build(root: Path, site: Path) -> subprocess.CompletedProcess:
    return subprocess.run(
        # Not --quiet: MkDocs 1.6 then drops the warnings --strict counts, and passes.
        [str(MKDOCS), "build", "--strict", "--site-dir", str(site)],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=300,
    )


def test_the_site_builds_strictly_and_loads_nothing_from_another_host(tmp_path):
    result = build(ROOT, tmp_path / "site")
    assert result.returncode == 0, result.stderr
    pages = list((tmp_path / "site").rglob("*.html"))
    assert len(pages) > 10
    for page in pages:
        html = page.read_text(encoding="utf-8")
        external = re.findall(
            r"<(?:script|link|img|iframe)\b[^>]*(?:src|href)=\"(?:https?:)?//", html
        )
        assert external == [], page.name
    for sheet in (tmp_path / "site").rglob("*.css"):
        assert not re.search(r"url\(['\"]?(?:https?:)?//", sheet.read_text(encoding="utf-8")), sheet


def test_a_broken_link_fails_the_strict_build(tmp_path):
    copy = tmp_path / "repo"
    copy.mkdir()
    for name in ("mkdocs.yml", "SECURITY.md"):
        shutil.copy(ROOT / name, copy / name)
    shutil.copytree(DOCS, copy / "docs")
    shutil.copytree(ROOT / "devtools", copy / "devtools")
    index = copy / "docs" / "index.md"
    index.write_text(index.read_text() + "\n[gone](no-such-page.md)\n")
    result = build(copy, tmp_path / "site")
    assert result.returncode != 0
    assert "no-such-page.md" in result.stderr


def test_the_readmes_layers_are_the_import_contracts():
    """The README's chain of layers is the one lint-imports enforces."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))
    contract = next(c for c in config["tool"]["importlinter"]["contracts"] if c["type"] == "layers")
    readme = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    assert "`" + " → ".join(contract["layers"]) + "`" in readme
