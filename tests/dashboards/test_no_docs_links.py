"""The pages explain themselves: none sends a lead or an expert to the README or to docs/,
which the browser cannot open (the export form is on the overview and the exports page)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

TEMPLATES = Path(settings.BASE_DIR) / "templates"


def test_no_template_names_the_readme_or_docs():
    """Every page's template (the API's own documentation pages aside, which it serves)."""
    templates = [p for p in TEMPLATES.rglob("*.html") if p.parent.name != "drf_spectacular"]
    assert len(templates) > 50
    for path in templates:
        text = path.read_text()
        assert "README" not in text and "docs/" not in text, path.relative_to(TEMPLATES)


@pytest.mark.django_db
def test_the_export_form_says_what_an_export_holds(client, rated):
    project, lead = rated
    client.force_login(lead)
    for name in ("dash-overview", "dash-exports"):
        page = client.get(reverse(name, args=[project.slug])).content.decode()
        # /api/docs/ is a page the app serves; the repository's docs/ is not
        assert not re.search(r"(?<!api/)docs/", page) and "README" not in page, name
        assert "manifest.json" in page, name
