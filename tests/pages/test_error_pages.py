"""403 and 404 pages: Arbiter's page with the server's reason (escaped) and a way home; a 403
is logged on one line, without a traceback. A form the CSRF check refuses gets Arbiter's page
too, not Django's bare one."""

import logging

import pytest
from django.test import Client
from django.urls import reverse

from projects.models import Membership, Project
from tests.factories import member
from tests.pages.denial_urls import HOSTILE

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.pages.denial_urls")]


@pytest.fixture
def project():
    return Project.objects.create(slug="errs", name="Errs")


def _is_arbiter_page(body: str) -> bool:
    return 'class="topbar"' in body and '<a href="/">Back to your projects</a>' in body


def test_a_403_says_why_and_links_home(client, project):
    client.force_login(member("ann", project))
    response = client.get(reverse("dash-overview", args=[project.slug]))
    assert response.status_code == 403
    body = response.content.decode()
    assert _is_arbiter_page(body)
    assert "Only the project&#x27;s leads may see this page." in body


def test_the_reason_of_a_403_or_404_is_escaped(client, project):
    client.force_login(member("ann", project))
    escaped = "&lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; &amp; more"
    for url, status in (("/_denied/", 403), ("/_missing/", 404)):
        response = client.get(url)
        body = response.content.decode()
        assert response.status_code == status and _is_arbiter_page(body), url
        assert escaped in body and HOSTILE not in body, url


def test_a_404_says_why_or_that_nothing_is_here(client, project):
    client.force_login(member("lead", project, role=Membership.Role.LEAD))
    missing = client.get(reverse("dash-overview", args=["nope"]))
    assert missing.status_code == 404 and _is_arbiter_page(missing.content.decode())
    assert "No such project." in missing.content.decode()
    unrouted = client.get("/no/such/page/")  # the resolver's 404 carries no sentence
    body = unrouted.content.decode()
    assert unrouted.status_code == 404 and _is_arbiter_page(body)
    assert "This page does not exist, or it is not yours to see." in body
    assert "Resolver404" not in body and "/no/such/page/" not in body


def test_a_form_sent_without_its_csrf_cookie_gets_arbiters_page_saying_what_to_do():
    browser = Client(enforce_csrf_checks=True)  # a session ended, or cookies blocked
    response = browser.post(reverse("login"), {"username": "ann", "password": "pw"})
    body = response.content.decode()
    assert response.status_code == 403 and _is_arbiter_page(body)
    assert "Open the page again and send the form once more." in body


def test_a_403_is_logged_on_one_line_and_a_bug_keeps_its_traceback(client, project, caplog):
    client.force_login(member("ann", project))
    caplog.set_level(logging.WARNING, logger="django.request")
    client.get(reverse("dash-overview", args=[project.slug]))
    client.get("/_denied/")
    denials = [r for r in caplog.records if r.name == "django.request"]
    assert [r.getMessage() for r in denials] == [
        f"Forbidden (Permission denied): {reverse('dash-overview', args=[project.slug])}",
        "Forbidden (Permission denied): /_denied/",
    ]
    assert all(r.exc_info is None for r in denials)
    assert "Traceback" not in caplog.text
    caplog.clear()
    client.raise_request_exception = False
    assert client.get("/_broken/").status_code == 500
    [error] = [r for r in caplog.records if r.name == "django.request"]
    assert error.exc_info and "Traceback" in caplog.text


def test_no_template_comment_leaks_into_a_page(client):
    """Django's {# #} comments end at the line: a longer one is sent as text."""
    page = client.get("/accounts/login/").content.decode()
    assert "{#" not in page and "#}" not in page and "never evaluates code" not in page
