"""A hook of the documentation site (mkdocs.yml): a link from a page to a file of the
repository outside docs/ (`../SECURITY.md`) works on GitHub, where the file sits beside the
page's folder, but has no page on the site: there it becomes its text. A link whose target
does not exist is left alone, so `mkdocs build --strict` still fails on it."""

import re
from pathlib import Path
from typing import Any

_LINK = re.compile(r"\[([^\]]+)\]\(([^)\s#]+)(#[^)\s]*)?\)")


def on_page_markdown(markdown: str, page: Any, config: Any, files: Any) -> str:
    docs = Path(config["docs_dir"]).resolve()
    folder = (docs / page.file.src_uri).parent

    def unlink(match: re.Match[str]) -> str:
        target = match.group(2)
        if "://" in target or target.startswith(("/", "mailto:")):
            return match.group(0)
        path = (folder / target).resolve()
        if path.is_relative_to(docs) or not path.exists():
            return match.group(0)
        return match.group(1)

    return _LINK.sub(unlink, markdown)
