"""One navigation: every page of a project carries the same project tabs, grouped by what a lead
does (work, quality, judging, import and export, project), with the same words, and the home
page names the lead's pages as the tabs do."""

import re

import pytest
from django.urls import reverse

from judging.models import Judge, JudgeRun

pytestmark = pytest.mark.django_db

# The tabs grouped by what a lead does: (group, its pages), in the bar's order.
GROUPS = [
    ("Work", ["Overview", "Pairs", "Disagreements", "Hours"]),
    ("Quality", ["Agreement", "Generators"]),
    ("Judging", ["Judges", "Judge runs", "Ensemble filter"]),
    ("Import and export", ["Data", "Exports"]),
    ("Project", ["Members", "Settings", "Audit trail"]),
]
TABS = [tab for _, tabs in GROUPS for tab in tabs]


def test_no_group_is_named_like_one_of_its_pages():
    # The current group's name stands before its pages in the bar: "Judges Judges" read as a slip.
    assert [group for group, tabs in GROUPS if group in tabs] == []


def tab_nav(page: str, url: str = "") -> str:
    nav = re.search(r'<nav class="tabs tab-groups" aria-label="Project pages">(.*?)</nav>',
                    page, re.S)  # fmt: skip
    assert nav, f"no project tabs on {url}"
    return nav.group(1)


def tab_words(page: str, url: str = "") -> list[str]:
    return [word for word in re.findall(r">([^<>]+)</a>", tab_nav(page, url)) if word.strip()]


def group_words(page: str, url: str = "") -> list[str]:
    """The groups' names: the current one's label and the others' menu names."""
    return re.findall(r'class="tab-group-name"[^>]*>([^<]+)<|<summary>([^<]+)</summary>',
                      tab_nav(page, url))  # fmt: skip


def test_every_project_page_has_the_same_tabs(client, lead_site):
    project, lead = lead_site
    judge = Judge.objects.get(name="local-coin")
    run = JudgeRun.objects.create(judge=judge, project=project)
    slug = project.slug
    urls = [
        reverse(name, args=[slug])
        for name in (
            "dash-overview", "dash-agreement", "dash-disagreements", "dash-pairs", "dash-judges",
            "dash-models", "dash-hours", "dash-exports", "run-list", "ensemble", "judge-list",
            "judge-new",
            "template-list", "template-new", "project-data", "project-members",
            "project-settings", "task-new", "project-webhooks", "project-audit",
        )
    ] + [
        reverse("run-detail", args=[slug, run.pk]),
        reverse("judge-edit", args=[slug, judge.pk]),
    ]  # fmt: skip
    client.force_login(lead)
    for url in urls:
        answer = client.get(url)
        assert answer.status_code == 200, url
        words = tab_words(answer.content.decode(), url)
        assert [w for w in words if w in TABS] == [w for w in TABS if w in words], url
        assert set(TABS) <= set(words), url
        groups = [a or b for a, b in group_words(answer.content.decode(), url)]
        assert groups == [name for name, _ in GROUPS], url


def test_the_page_shown_lists_its_groups_pages_and_the_others_are_menus(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    page = client.get(reverse("dash-agreement", args=[project.slug])).content.decode()
    nav = tab_nav(page)
    current = re.search(r'<li class="tab-group current">(.*?)</li>\s*<li class="tab-group">', nav,
                        re.S).group(1)  # fmt: skip
    assert "Quality" in current and "<details" not in current
    assert re.findall(r">([^<>]+)</a>", current) == ["Agreement", "Generators"]
    assert 'aria-current="page">Agreement<' in current
    assert nav.count("<details") == 4 and nav.count('aria-current="page"') == 1


def test_the_home_page_names_the_lead_pages_as_the_tabs_do(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    page = client.get(reverse("home")).content.decode()
    links = dict((text, href) for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', page))
    assert links["Overview"] == reverse("dash-overview", args=[project.slug])
    assert links["Judges"] == reverse("dash-judges", args=[project.slug])  # as the tab
    assert links["Judge settings"] == reverse("judge-list", args=[project.slug])
    assert "Dashboard" not in links


def test_the_exports_page_starts_an_export_itself(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    page = client.get(reverse("dash-exports", args=[project.slug])).content.decode()
    start = reverse("dash-export-start", args=[project.slug])
    assert f'action="{start}"' in page and "Start export" in page
    assert "Start an export from the" not in page
    before = project.export_jobs.count()
    answer = client.post(start, {"format": "jsonl", "task": ""})
    assert answer.status_code == 302 and project.export_jobs.count() == before + 1


def test_a_page_is_called_what_its_tab_and_the_home_page_call_it(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    home = client.get(reverse("home")).content.decode()
    home_words = {href: text for href, text in re.findall(r'<a href="([^"]+)">([^<]+)</a>', home)}
    for name in ("dash-agreement", "dash-judges", "dash-models", "dash-hours", "dash-exports",
                 "run-list", "ensemble", "judge-list", "template-list"):  # fmt: skip
        url = reverse(name, args=[project.slug])
        page = client.get(url).content.decode()
        title = re.search(r"<title>([^<·]+) ·", page).group(1).strip()
        tab = re.search(r'aria-current="page">([^<]+)</a>', tab_nav(page, url)).group(1)
        if tab != "Settings":  # the settings' subpages carry the Settings tab
            assert title == tab, url
        if url in home_words:
            assert title == home_words[url], url


def test_a_page_outside_the_tabs_offers_every_group_as_a_menu(client, lead_site):
    project, lead = lead_site
    client.force_login(lead)
    expert = project.memberships.get(user__username="ann1").user
    url = reverse("dash-annotator", args=[project.slug, expert.pk])
    nav = tab_nav(client.get(url).content.decode(), url)
    assert nav.count("<details") == 5 and 'aria-current="page"' not in nav
    assert re.findall(r">([^<>]+)</a>", nav) == TABS


ACCOUNT_PAGES = ("home", "notifications", "password_change")


def account_links(page: str) -> list[str]:
    links = re.search(r'<div class="account-links">(.*?)</div>', page, re.S)
    return re.findall(r'<a href="[^"]*">([^<]+)</a>', links.group(1))


def test_the_account_menu_offers_the_api_to_leads_and_not_to_annotators(
    client, lead_site, annotator
):
    project, lead = lead_site
    client.force_login(annotator)
    for name in ACCOUNT_PAGES:
        answer = client.get(reverse(name))
        assert answer.status_code == 200, name
        assert account_links(answer.content.decode()) == ["Help", "Password"], name
    # The pages stay reachable at their addresses for an annotator who knows them.
    assert client.get(reverse("api-tokens")).status_code == 200
    client.force_login(lead)
    for name in ACCOUNT_PAGES:
        links = account_links(client.get(reverse(name)).content.decode())
        assert links == ["Help", "API", "API tokens", "Password"], name
