"""The project's tabs, grouped by what a lead does there: one list, so that every page (and
both languages) names the groups and the pages with the same words."""

from typing import Any

from django import template
from django.urls import reverse
from django.utils.translation import gettext_lazy, pgettext_lazy

from projects.models import Project

register = template.Library()

# (group, [(tab key as pages pass it, URL name, word)]). The keys are the `tab` every template
# includes dashboards/_nav.html with. A group is not named like one of its pages: the bar
# shows the current group's name before its pages ("Judging: Judges", not "Judges Judges").
TAB_GROUPS = [
    (pgettext_lazy("project tabs", "Work"), [
        ("overview", "dash-overview", gettext_lazy("Overview")),
        ("pairs", "dash-pairs", gettext_lazy("Pairs")),
        ("disagreements", "dash-disagreements", gettext_lazy("Disagreements")),
        ("hours", "dash-hours", gettext_lazy("Hours")),
    ]),
    (pgettext_lazy("project tabs", "Quality"), [
        ("agreement", "dash-agreement", gettext_lazy("Agreement")),
        ("models", "dash-models", gettext_lazy("Generators")),
    ]),
    (pgettext_lazy("project tabs", "Judging"), [
        ("judges", "dash-judges", gettext_lazy("Judges")),
        ("runs", "run-list", gettext_lazy("Judge runs")),
        ("ensemble", "ensemble", gettext_lazy("Ensemble filter")),
    ]),
    (pgettext_lazy("project tabs", "Import and export"), [
        ("data", "project-data", gettext_lazy("Data")),
        ("exports", "dash-exports", gettext_lazy("Exports")),
    ]),
    (pgettext_lazy("project tabs", "Project"), [
        ("members", "project-members", gettext_lazy("Members")),
        ("settings", "project-settings", gettext_lazy("Settings")),
        ("audit", "project-audit", gettext_lazy("Audit trail")),
    ]),
]  # fmt: skip


@register.inclusion_tag("dashboards/_tab_groups.html")
def project_tabs(project: Project, tab: str | None = None) -> dict[str, Any]:
    """The groups of `project`'s tabs, the one holding `tab` (the page shown) marked current:
    its pages are listed in the bar, the others open as menus."""
    groups = []
    for index, (name, tabs) in enumerate(TAB_GROUPS):
        links = [
            {"word": word, "url": reverse(url_name, args=[project.slug]), "current": key == tab}
            for key, url_name, word in tabs
        ]
        groups.append(
            {
                "name": name,
                "id": f"tab-group-{index}",
                "links": links,
                "current": any(link["current"] for link in links),
            }
        )
    return {"groups": groups}
