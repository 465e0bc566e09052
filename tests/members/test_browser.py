"""The invitation journey in Chromium: the lead makes a link and copies it, the invitee signs
up on it and lands in the project, with no console error (the page's CSP blocks inline code)."""

import pytest
from django.contrib.auth.models import User
from django.urls import reverse
from playwright.sync_api import expect

from projects.models import Membership
from tests.conftest import watch_errors
from tests.members.conftest import PASSWORD

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

WAIT_MS = 10_000


def test_a_lead_invites_and_the_invitee_lands_in_the_project(
    project, lead, live_server, chromium_browser
):
    lead.set_password(PASSWORD)
    lead.save()
    context = chromium_browser.new_context()
    context.grant_permissions(["clipboard-read", "clipboard-write"], origin=live_server.url)
    page = watch_errors(context.new_page())
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + "/", timeout=WAIT_MS)

    page.goto(live_server.url + reverse("project-members", args=[project.slug]))
    assert page.locator("nav.tabs a[aria-current=page]").inner_text() == "Members"
    page.fill("input[name=note]", "for Ann")
    page.click("text=Create the invitation link")
    link = page.input_value("#invitation-link")
    assert link.startswith(live_server.url + "/invite/")
    copy = page.locator("button[data-copy]")
    expect(copy).to_be_visible()  # shown by members.js: the script ran under the CSP
    copy.click()
    page.wait_for_function("document.querySelector('button[data-copy]').textContent === 'Copied'")
    assert page.evaluate("navigator.clipboard.readText()") == link
    assert page.console_errors == []
    context.close()

    invitee = watch_errors(chromium_browser.new_page())  # another browser, nobody signed in
    invitee.goto(link)
    assert project.name in invitee.inner_text("h1")
    invitee.fill("input[name=username]", "ann")
    invitee.fill("input[name=password1]", PASSWORD)
    invitee.fill("input[name=password2]", PASSWORD)
    invitee.click("text=Create my account and join")
    invitee.wait_for_url(live_server.url + "/", timeout=WAIT_MS)
    assert project.name in invitee.inner_text("main")
    assert invitee.locator("text=Start").count() >= 1
    assert invitee.console_errors == []
    user = User.objects.get(username="ann")
    assert Membership.objects.get(user=user, project=project).role == "annotator"
