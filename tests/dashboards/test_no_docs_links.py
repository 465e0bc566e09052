"""A lead's pages explain themselves: none sends the lead to the README or to docs/, which the
browser cannot open (the dashboards' and the judging pages' templates; the export form is on
the overview and the exports page)."""

import re
from pathlib import Path

import pytest
from django.conf import settings
from django.urls import reverse

TEMPLATES = Path(settings.BASE_DIR) / "templates"
PAIR_BROWSER = {"pairs.html", "_pairs_filter.html", "disagreements.html", "pairs_confirm.html",
                "pair.html"}  # fmt: skip


def test_no_dashboard_or_judging_template_names_the_readme_or_docs():
    pages = (TEMPLATES / "dashboards").glob("*.html")
    dashboards = [p for p in pages if p.name not in PAIR_BROWSER]
    owned = dashboards + list((TEMPLATES / "judging").glob("*.html"))
    assert owned
    for path in owned:
        text = path.read_text()
        assert "README" not in text and "docs/" not in text, path.name


@pytest.mark.django_db
def test_the_export_form_says_what_an_export_holds(client, rated):
    project, lead = rated
    client.force_login(lead)
    for name in ("dash-overview", "dash-exports"):
        page = client.get(reverse(name, args=[project.slug])).content.decode()
        # /api/docs/ is a page the app serves; the repository's docs/ is not
        assert not re.search(r"(?<!api/)docs/", page) and "README" not in page, name
        assert "manifest.json" in page, name
