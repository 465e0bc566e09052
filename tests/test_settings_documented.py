"""Every environment variable the settings read is declared in config/env.py, whose
declarations are the operators' table (docs/environment.md, generated from them): an operator
learns what a deployment can set from one place, and the page cannot drift from the code."""

import re
from pathlib import Path

import pytest

from config import env

ROOT = Path(__file__).resolve().parents[1]
READ = re.compile(r"""\benv_(?:str|bool|int|list)\(\s*["']([A-Z][A-Z0-9_]*)["']""")
# Defaults the table states in words, not as the value the settings pass.
DEFAULTS_IN_WORDS = {"CELERY_VISIBILITY_TIMEOUT"}
# Read by other means than config.env's readers: the production settings (HTTPS), Django's
# own start-up, and the object-storage settings (config/object_storage.py).
READ_ELSEWHERE = {
    "SECURE_SSL_REDIRECT", "SECURE_HSTS_SECONDS", "DJANGO_SETTINGS_MODULE",
    "S3_BUCKET", "S3_ENDPOINT_URL", "S3_REGION", "S3_PREFIX",
}  # fmt: skip


def config_sources() -> str:
    return "\n".join(path.read_text(encoding="utf-8") for path in (ROOT / "config").glob("*.py"))


def test_every_variable_the_settings_read_is_declared():
    read = set(READ.findall(config_sources()))
    assert len(read) > 40
    assert sorted(read - env.declared_names()) == []


def test_every_declared_variable_is_read_by_the_configuration():
    sources = config_sources()
    unread = [name for name in env.declared_names() if f'"{name}"' not in sources]
    assert unread == []


def test_the_environment_page_is_the_generated_one():
    """Edit config/env.py, then `python -m config.env --markdown > docs/environment.md`."""
    page = (ROOT / "docs" / "environment.md").read_text(encoding="utf-8")
    assert page == env.markdown()


def _shown(value: object) -> str | None:
    if isinstance(value, bool):
        return f"`{str(value).lower()}`"
    if isinstance(value, int):
        return f"`{value}`"
    if isinstance(value, list):
        return f"`{','.join(value)}`" if value else None
    return f"`{value}`" if value else None


@pytest.mark.parametrize(
    "variable",
    [
        v
        for v in env.VARIABLES
        if len(v.names) == 1 and v.names[0] not in DEFAULTS_IN_WORDS | READ_ELSEWHERE
    ],
    ids=lambda v: v.names[0],
)
def test_a_declared_default_is_the_one_the_settings_use(variable):
    read = env.defaults_read()  # the settings are loaded: every reader has run
    name = variable.names[0]
    assert name in read, f"{name} is not read through config.env: list it in READ_ELSEWHERE"
    shown = _shown(read[name])
    if shown is None:  # read as empty: the table says what empty means
        return
    assert variable.default.startswith(shown), (name, variable.default, shown)


def test_the_variables_read_elsewhere_are_exactly_those_config_env_never_reads():
    single = {v.names[0] for v in env.VARIABLES if len(v.names) == 1}
    assert single - set(env.defaults_read()) - DEFAULTS_IN_WORDS == READ_ELSEWHERE


def test_a_default_that_differs_from_the_settings_fails():
    wrong = env.Variable(("ARBITER_LOGIN_WINDOW_SECONDS",), default="`600`", meaning="")
    assert not wrong.default.startswith(_shown(env.defaults_read()[wrong.names[0]]) or "")
