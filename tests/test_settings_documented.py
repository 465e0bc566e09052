"""Every environment variable the settings read has its row in the README's tables: an
operator learns what a deployment can set from one place."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
READ = re.compile(r"""\benv_(?:str|bool|int|list)\(\s*["']([A-Z][A-Z0-9_]*)["']""")


def variables_read() -> set[str]:
    return {
        name
        for path in (ROOT / "config").glob("*.py")
        for name in READ.findall(path.read_text(encoding="utf-8"))
    }


def test_every_variable_the_settings_read_is_in_the_readme():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    first_cells = re.findall(r"^\|([^|\n]*)\|", readme, re.M)
    documented = {name for cell in first_cells for name in re.findall(r"`([A-Z][A-Z0-9_]*)`", cell)}
    read = variables_read()
    assert len(read) > 40
    assert sorted(read - documented) == []
