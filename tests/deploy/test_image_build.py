"""The production image builds from what its Dockerfile copies, without Docker.

The file set is assembled the way `docker build` would: the COPY lines of the Dockerfile,
filtered by .dockerignore (Docker's rules: patterns relative to the context root, `*` and `?`
within one path segment, `**` across segments, a match on a folder covers what is inside,
the last matching line wins, `!` takes a path back). On that copy alone, with the project's
interpreter but none of the checkout (the editable install's finder is switched off),
config.production must pass `check --deploy` and `collectstatic`.
"""

import os
import re
import secrets
import shlex
import shutil
import subprocess
import sys
from pathlib import Path, PurePosixPath

import pytest

REPO_ROOT = Path(__file__).resolve().parents[2]
_CLEARED = ("DATABASE_URL", "REDIS_URL", "DEBUG", "SECRET_KEY", "ALLOWED_HOSTS", "MEDIA_ROOT")

# Runs manage.py with the checkout out of reach: `pip install -e .` put a finder on
# sys.meta_path that would import any package of the checkout the copy lacks.
_BOOTSTRAP = """
import runpy, sys
sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in repr(f).lower()]
sys.path_hooks[:] = [h for h in sys.path_hooks if "editable" not in repr(h).lower()]
sys.path_importer_cache.clear()
sys.argv = ["manage.py", *sys.argv[1:]]
runpy.run_path("manage.py", run_name="__main__")
"""

# ---------------------------------------------------------------- .dockerignore rules


def _pattern_regex(pattern: str) -> re.Pattern:
    out, i = "", 0
    while i < len(pattern):
        char = pattern[i]
        if pattern.startswith("**/", i):
            out, i = out + "(?:.*/)?", i + 3
        elif pattern.startswith("**", i):
            out, i = out + ".*", i + 2
        elif char == "*":
            out, i = out + "[^/]*", i + 1
        elif char == "?":
            out, i = out + "[^/]", i + 1
        elif char == "[":
            end = pattern.index("]", i + 1)
            body = pattern[i + 1 : end]
            out += "[" + ("^" + body[1:] if body.startswith(("!", "^")) else body) + "]"
            i = end + 1
        elif char == "\\" and i + 1 < len(pattern):
            out, i = out + re.escape(pattern[i + 1]), i + 2
        else:
            out, i = out + re.escape(char), i + 1
    return re.compile(out + r"\Z")


def parse_dockerignore(text: str) -> list[tuple[bool, re.Pattern]]:
    """(is an exception `!`, pattern) per line, in order."""
    rules = []
    for raw in text.splitlines():
        line = raw.strip()
        if not line or line.startswith("#"):
            continue
        exception = line.startswith("!")
        line = line[1:].strip() if exception else line
        cleaned = os.path.normpath(line).replace(os.sep, "/").lstrip("/")
        if cleaned in ("", "."):
            continue
        rules.append((exception, _pattern_regex(cleaned)))
    return rules


def is_ignored(path: str, rules) -> bool:
    """Docker's matcher: a rule applies when it matches the path or one of its folders."""
    parts = PurePosixPath(path).parts
    candidates = ["/".join(parts[: n + 1]) for n in range(len(parts))]
    ignored = False
    for exception, regex in rules:
        if any(regex.match(candidate) for candidate in candidates):
            ignored = not exception
    return ignored


def copy_lines(dockerfile: str) -> list[tuple[list[str], str]]:
    """(sources, destination) of each COPY from the build context (not `--from=` stages)."""
    joined = re.sub(r"\\\n", " ", dockerfile)
    copies = []
    for line in joined.splitlines():
        words = shlex.split(line, comments=True)
        if not words or words[0].upper() != "COPY":
            continue
        args = [w for w in words[1:] if not w.startswith("--")]
        if any(w.startswith("--from") for w in words[1:]):
            continue
        copies.append((args[:-1], args[-1]))
    return copies


def assemble_image_files(context: Path, dockerfile: str, dockerignore: str, into: Path) -> Path:
    """What `COPY` puts into WORKDIR, from `context` filtered by `dockerignore`, in `into`."""
    rules = parse_dockerignore(dockerignore)
    # Without `!` lines nothing inside an ignored folder can come back: skip its walk (.venv).
    prune = not any(exception for exception, _ in rules)
    kept = []
    for folder, subfolders, files in os.walk(context):
        relative = Path(folder).relative_to(context).as_posix()
        prefix = "" if relative == "." else relative + "/"
        if prune:
            subfolders[:] = [d for d in subfolders if not is_ignored(prefix + d, rules)]
        kept += [prefix + f for f in files if not is_ignored(prefix + f, rules)]
    for sources, destination in copy_lines(dockerfile):
        target_root = into / destination.strip("/").removeprefix("app").strip("/")
        for source in sources:
            source = os.path.normpath(source).replace(os.sep, "/")
            source_path = context / source
            if source == ".":
                chosen = {name: name for name in kept}
            elif source_path.is_dir():
                prefix = source.rstrip("/") + "/"
                chosen = {n: n.removeprefix(prefix) for n in kept if n.startswith(prefix)}
            else:  # one file: to `dest/` keeps its name
                chosen = {n: PurePosixPath(n).name for n in kept if n == source}
            for name, relative in chosen.items():
                target = target_root / relative
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(context / name, target)
    return into


# ---------------------------------------------------------------- the rules themselves


@pytest.mark.parametrize(
    ("patterns", "path", "ignored"),
    [
        ("tests", "tests/test_x.py", True),  # a folder covers its contents
        ("tests", "api/tests/x.py", False),  # no slash: the top only (unlike .gitignore)
        ("**/__pycache__", "api/views/__pycache__/a.pyc", True),
        ("**/*.py[cod]", "a.pyc", True),  # ** also matches no folder at all
        ("*.egg-info", "arbiter.egg-info/PKG-INFO", True),
        ("*.md\n!README.md", "README.md", False),  # the last match wins
        ("*.md\n!README.md", "docs/x.md", False),  # * does not cross a slash
        ("docs\n!docs/keep.md", "docs/keep.md", False),
        (".env.*", ".env.local", True),
        ("/var/", "var/x", True),  # leading and trailing slashes are cleaned away
        ("a?c", "abc", True),
    ],
)
def test_dockerignore_rules(patterns, path, ignored):
    assert is_ignored(path, parse_dockerignore(patterns)) is ignored


def test_secrets_and_local_state_stay_out_of_the_image():
    rules = parse_dockerignore((REPO_ROOT / ".dockerignore").read_text())
    for path in [".env", ".env.production", ".git/config", ".venv/bin/python", "var/secret_key",
                 "var/arbiter.sqlite3", "tests/conftest.py", "deploy/site.key",
                 "config/__pycache__/settings.cpython-311.pyc"]:  # fmt: skip
        assert is_ignored(path, rules), path
    for path in ["manage.py", "pyproject.toml", "config/settings.py", "dashboards/views.py",
                 "templates/base.html", "static/arbiter.css"]:  # fmt: skip
        assert not is_ignored(path, rules), path


# ---------------------------------------------------------------- the build steps


def _run_in_image_copy(app: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env.update(
        PYTHONPATH=str(app),
        DJANGO_SETTINGS_MODULE="config.production",
        SECRET_KEY=secrets.token_urlsafe(60),
        ALLOWED_HOSTS="arbiter.example.org",
        DATABASE_URL=f"sqlite:///{tmp_path / 'db.sqlite3'}",
        ARBITER_VAR_DIR=str(tmp_path / "var"),
        STATIC_ROOT=str(tmp_path / "staticfiles"),
        MEDIA_ROOT=str(tmp_path / "media"),
    )
    return subprocess.run(
        [sys.executable, "-c", _BOOTSTRAP, *args],
        cwd=app,
        env=env,
        capture_output=True,
        text=True,
        timeout=180,
    )


def _build_steps(app: Path, tmp_path: Path) -> list[subprocess.CompletedProcess]:
    return [
        _run_in_image_copy(app, tmp_path, "check", "--deploy", "--fail-level", "WARNING"),
        _run_in_image_copy(app, tmp_path, "collectstatic", "--noinput"),
    ]


def test_the_image_files_pass_check_deploy_and_collectstatic(tmp_path):
    app = assemble_image_files(
        REPO_ROOT,
        (REPO_ROOT / "Dockerfile").read_text(),
        (REPO_ROOT / ".dockerignore").read_text(),
        tmp_path / "app",
    )
    assert (app / "manage.py").is_file() and not (app / "tests").exists()
    for step in _build_steps(app, tmp_path):
        assert step.returncode == 0, step.stdout + step.stderr
    assert (tmp_path / "staticfiles" / "staticfiles.json").is_file()  # the hashed manifest
    assert list((tmp_path / "staticfiles" / "drf_spectacular_sidecar").rglob("*.js"))


# The Dockerfile before `COPY . .`: it listed the app folders one by one and missed some.
OLD_DOCKERFILE = """
WORKDIR /app
COPY pyproject.toml ./
COPY config/ config/
COPY annotation/ annotation/
COPY judging/ judging/
COPY metrics/ metrics/
COPY manage.py ./
COPY templates/ templates/
COPY static/ static/
"""


def test_a_dockerfile_that_forgets_an_app_folder_fails_the_check(tmp_path):
    app = assemble_image_files(
        REPO_ROOT, OLD_DOCKERFILE, (REPO_ROOT / ".dockerignore").read_text(), tmp_path / "app"
    )
    assert not (app / "dashboards").exists()
    check = _build_steps(app, tmp_path)[0]
    assert check.returncode != 0
    # The first package it lacks (dashboards was the one reported, before core existed).
    assert re.search(r"No module named '(core|exports|dashboards|api|demo)'", check.stderr)
