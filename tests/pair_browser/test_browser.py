"""The pair browser in Chromium, as a lead: find a pair by a word of its prompt and by a
filter, open it; tick pairs and confirm a bulk action; move between rows and open one with the
keys; save, open and delete a view; axe finds nothing on its pages at 1366 and 390 pixels
wide."""

import re

import pytest
from django.urls import reverse
from playwright.sync_api import expect

from content.models import Pair
from dashboards.services.saved_views import saved_view_save
from projects.models import Membership
from tests.axe import violations
from tests.factories import member
from tests.pages.browsing import DESKTOP, PHONE, WAIT_MS, log_in, open_settled
from tests.settling import settled

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]


def rows(page):
    return page.locator("#pairs-bulk tbody tr")


def test_a_lead_finds_a_pair_by_a_word_of_its_prompt_and_by_a_filter_and_opens_it(
    browsed, live_server, chromium_browser
):
    project, lead = browsed
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-overview", args=[project.slug]))
    page.get_by_role("navigation", name="Project pages").get_by_role("link", name="Pairs").click()
    page.get_by_label("Search").fill("number 3")
    page.get_by_role("combobox", name="Task").select_option(label="t2i")
    page.get_by_role("button", name="Find pairs").click()
    expect(page.locator("#pairs-total")).to_contain_text("1 pair matches", timeout=WAIT_MS)
    pair = Pair.objects.get(project=project, task__slug="t2i", external_id__contains="-3-")
    rows(page).get_by_role("link", name=pair.external_id).click()
    page.wait_for_url(f"**{reverse('dash-pair', args=[project.slug, pair.pk])}")
    expect(page.locator("h1")).to_contain_text(pair.external_id)

    page.go_back()
    page.get_by_role("link", name="Clear").click()
    page.get_by_text("More filters and columns").click()
    page.get_by_label("Open flag").select_option("yes")
    page.get_by_role("button", name="Find pairs").click()
    expect(page.locator("#pairs-total")).to_contain_text("1 pair matches", timeout=WAIT_MS)
    flagged = Pair.objects.get(
        project=project, flags__isnull=False, flags__resolved_at__isnull=True
    )
    expect(rows(page)).to_have_count(1)
    rows(page).get_by_role("link").click()
    expect(page.locator("h1")).to_contain_text(flagged.external_id, timeout=WAIT_MS)
    assert page.console_errors == []


def test_a_lead_ticks_the_page_and_confirms_a_bulk_action(browsed, live_server, chromium_browser):
    project, lead = browsed
    page = log_in(chromium_browser, live_server.url, lead)
    page.goto(live_server.url + reverse("dash-pairs", args=[project.slug]) + "?task=edit")
    page.get_by_label("Tick every pair of this page").check()
    expect(page.locator("#pairs-bulk tbody input[name=pair]:checked")).to_have_count(4)
    page.get_by_label("Action").select_option("queue")
    page.get_by_role("button", name="Continue…").click()
    expect(page.locator("#bulk-count")).to_contain_text("2 pairs will change", timeout=WAIT_MS)
    assert Pair.objects.filter(project=project, status="candidate").count() == 2
    page.get_by_role("button", name=re.compile("Queue for annotation: 2 pairs")).click()
    expect(page.locator(".messages")).to_contain_text("2 pairs changed", timeout=WAIT_MS)
    assert page.url.endswith("/pairs/?task=edit")
    assert not Pair.objects.filter(project=project, status="candidate").exists()
    assert page.console_errors == []


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["1366", "390"])
def test_the_pair_browser_has_no_violation(browsed, live_server, chromium_browser, viewport):
    project, lead = browsed
    # A view of the lead's own and one a colleague shared, with the lead's delete button.
    saved_view_save(project=project, lead=lead, name="Mine", shared=False, query="task=edit")
    colleague = member("colleague", project, role=Membership.Role.LEAD)
    saved_view_save(project=project, lead=colleague, name="Team", shared=True, query="gold=yes")
    page = log_in(chromium_browser, live_server.url, lead, viewport=viewport)
    base = live_server.url + reverse("dash-pairs", args=[project.slug])
    found = {}
    for name, query in [("all", ""), ("filtered", "?flagged=no&sort=span&order=desc"),
                        ("bad value", "?ratings_min=abc"), ("nothing", "?q=zebra")]:  # fmt: skip
        open_settled(page, base + query)
        if lines := violations(page):
            found[name] = lines
        assert page.locator("h1").count() == 1
    open_settled(page, base)
    page.get_by_label("Action").select_option("drop")
    page.get_by_role("radio", name=re.compile("all 12 matching")).check()
    page.get_by_role("button", name="Continue…").click()
    settled(page)
    if lines := violations(page):
        found["confirmation"] = lines
    assert found == {}, found
    # The bad value's page answers 400, as it should; nothing else went wrong.
    assert [e for e in page.console_errors if "status of 400" not in e] == []


def test_keys_move_between_rows_and_open_a_pair_but_leave_text_fields_alone(
    browsed, live_server, chromium_browser
):
    project, lead = browsed
    page = log_in(chromium_browser, live_server.url, lead)
    open_settled(page, live_server.url + reverse("dash-pairs", args=[project.slug]))
    current = page.locator("#pairs-bulk tbody tr[data-row-current]")
    search = page.get_by_label("Search")
    search.click()
    page.keyboard.type("jk")  # typed into the field, not taken as keys
    expect(search).to_have_value("jk")
    expect(current).to_have_count(0)
    search.press("Escape")
    page.locator("h1").click()
    page.keyboard.press("j")
    expect(current).to_have_count(1)
    expect(current).to_be_focused()
    first = rows(page).nth(0)
    expect(first).to_have_attribute("data-row-current", "")
    page.keyboard.press("j")
    page.keyboard.press("ArrowDown")
    expect(rows(page).nth(2)).to_have_attribute("data-row-current", "")
    page.keyboard.press("k")
    second = rows(page).nth(1)
    expect(second).to_have_attribute("data-row-current", "")
    page.keyboard.press("x")
    expect(second.locator("input[name=pair]")).to_be_checked()
    name = second.locator("[data-row-open]").inner_text()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text(name, timeout=WAIT_MS)
    assert page.console_errors == []


def test_a_lead_saves_a_view_shares_it_opens_it_and_deletes_it(
    browsed, live_server, chromium_browser
):
    project, lead = browsed
    page = log_in(chromium_browser, live_server.url, lead)
    base = live_server.url + reverse("dash-pairs", args=[project.slug])
    open_settled(page, base + "?task=edit&sort=id&order=desc&cols=prompt,images,status")
    page.get_by_text("Save this view…").click()
    page.get_by_label("Name").fill("Edit, newest first")
    page.get_by_label("Share with the project's leads").check()
    page.get_by_role("button", name="Save view").click()
    expect(page.locator(".messages")).to_contain_text("saved", timeout=WAIT_MS)
    views = page.get_by_role("region", name="Saved views")
    link = page.locator(".pairs-view-list").get_by_role("link", name="Edit, newest first")
    expect(link).to_have_attribute("aria-current", "true")
    page.get_by_role("link", name="Clear").click()
    expect(page.locator("#pairs-total")).to_contain_text("12 pairs match", timeout=WAIT_MS)
    link.click()
    expect(page.locator("#pairs-total")).to_contain_text("4 pairs match", timeout=WAIT_MS)
    expect(page.locator("#pairs-bulk thead th")).to_have_count(5)  # box, pair, 3 columns
    page.get_by_role("button", name="Delete the view Edit, newest first").click()
    expect(page.locator(".messages")).to_contain_text("deleted", timeout=WAIT_MS)
    expect(link).to_have_count(0)
    expect(views).to_contain_text("None yet.")
    assert page.console_errors == []


def test_the_disagreement_queue_takes_the_same_keys(browsed, live_server, chromium_browser):
    project, lead = browsed
    page = log_in(chromium_browser, live_server.url, lead)
    open_settled(page, live_server.url + reverse("dash-disagreements", args=[project.slug])
                 + "?state=all")  # fmt: skip
    queue_rows = page.locator("table.queue-table tbody tr")
    assert queue_rows.count() >= 2
    page.keyboard.press("j")
    page.keyboard.press("j")
    second = queue_rows.nth(1)
    expect(second).to_have_attribute("data-row-current", "")
    name = second.locator("[data-row-open]").inner_text()
    page.keyboard.press("Enter")
    expect(page.locator("h1")).to_contain_text(name, timeout=WAIT_MS)
    assert "from=queue" in page.url
    assert page.console_errors == []
