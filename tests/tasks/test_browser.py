"""In Chromium: a lead archives a task from the settings page (after its confirmation) and the
annotator's home page no longer offers it; the changed pages (settings with an archived task,
a task's page archived and empty, the upload form) pass axe at 1366 and 390 px and are no
wider than a phone."""

import re

import pytest
from django.urls import reverse

from projects.models import Membership, Task
from tests.axe import violations
from tests.factories import member, queued_pairs
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

PAGE_WIDTH = "[document.documentElement.scrollWidth, window.innerWidth]"


@pytest.fixture
def site(tmp_path):
    """A project with two tasks holding pairs and an empty one (a mistyped upload's)."""
    task = queued_pairs(tmp_path, project_slug="ann", task_slug="t2i", count=2)
    queued_pairs(tmp_path, project_slug="ann", task_slug="edit", count=1)
    Task.objects.create(project=task.project, slug="tti", name="tti")
    lead = member("boss", task.project, role="lead")
    annotator = member("rater", task.project)
    return task.project, lead, annotator


def _home_tasks(page) -> list[str]:
    return page.get_by_role("progressbar").evaluate_all("bars => bars.map(b => b.ariaLabel)")


def test_a_lead_archives_a_task_and_it_leaves_the_annotators_home(
    site, live_server, chromium_browser
):
    project, lead, annotator = site
    base = live_server.url
    rater = log_in(chromium_browser, base, annotator)
    assert any(label.startswith("Task t2i:") for label in _home_tasks(rater))

    page = log_in(chromium_browser, base, lead)
    open_settled(page, base + reverse("project-settings", args=[project.slug]))
    item = page.locator("#task-t2i")
    item.locator("summary", has_text="Archive…").click()
    assert "Archive task t2i? Its 2 pairs" in item.inner_text()
    item.get_by_role("button", name="Archive t2i").click()
    page.wait_for_url(re.compile(r"/settings/$"), timeout=WAIT_MS)
    page.get_by_text("Task t2i archived").wait_for(timeout=WAIT_MS)
    assert page.locator("#task-t2i").get_by_role("button", name="Restore t2i").count() == 1

    rater.reload()
    labels = _home_tasks(rater)
    assert not any(label.startswith("Task t2i:") for label in labels)
    assert any(label.startswith("Task edit:") for label in labels)
    assert Membership.objects.get(user=annotator).tasks.count() == 0  # nothing else changed
    assert page.console_errors == [] and rater.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_settings_and_upload_pages_pass_axe(site, live_server, chromium_browser, viewport):
    project, lead, _ = site
    Task.objects.filter(slug="edit").update(archived_at="2026-12-01T00:00:00Z")
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    found, too_wide = {}, {}
    pages = {
        "settings": reverse("project-settings", args=[project.slug]),
        "archived task": reverse("task-edit", args=[project.slug, "edit"]),
        "empty task": reverse("task-edit", args=[project.slug, "tti"]),
        "data": reverse("project-data", args=[project.slug]),  # last: its form is used below
    }
    for name, path in pages.items():
        open_settled(page, live_server.url + path)
        for summary in page.locator("details.task-action > summary").all():
            summary.click()  # the confirmations open, so axe reads them too
        lines = violations(page)
        if lines:
            found[name] = lines
        scroll_width, inner_width = page.evaluate(PAGE_WIDTH)
        if scroll_width > inner_width + 1:
            too_wide[name] = scroll_width
    assert found == {}, found
    assert too_wide == {}, too_wide
    options = page.locator("select[name=task] option").all_inner_texts()
    assert options == ["t2i", "tti", "New task…"]  # edit is archived: not offered
    slug = page.locator("input[name=new_task]")
    assert slug.is_hidden()  # shown only for a new task
    page.select_option("select[name=task]", "+new")
    assert slug.is_visible() and slug.evaluate("input => input === document.activeElement")
    assert page.console_errors == []
