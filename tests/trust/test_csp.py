"""Content-Security-Policy on every kind of page (core/csp.py): scripts from our origin or
with the response's nonce only, no inline event handlers, and no violation in a real browser."""

import json
import re
from html.parser import HTMLParser

import pytest
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.services.assignments import assignment_claim
from projects.models import Membership
from tests.factories import member, queued_pairs

PASSWORD = "pw-annotate-1"
# Script types a browser executes (anything else, e.g. application/json, is data).
_JS_TYPES = {"", "text/javascript", "application/javascript", "module"}


def directives(header: str) -> dict[str, list[str]]:
    parsed = {}
    for part in header.split(";"):
        words = part.split()
        if words:
            parsed[words[0]] = words[1:]
    return parsed


class _Scan(HTMLParser):
    """Executable inline scripts without the nonce, and on*= attributes, in a page."""

    def __init__(self, nonce: str):
        super().__init__()
        self.nonce = nonce
        self.problems = []
        self.htmx_configs = []

    def handle_starttag(self, tag, attrs):
        values = dict(attrs)
        if tag == "meta" and values.get("name") == "htmx-config":
            self.htmx_configs.append(json.loads(values["content"]))
        for name, _ in attrs:
            if name.startswith("on") or name.startswith("hx-on"):
                self.problems.append(f"<{tag} {name}=…>")
        executable = tag == "script" and (values.get("type") or "").lower() in _JS_TYPES
        if executable and not values.get("src") and values.get("nonce") != self.nonce:
            self.problems.append("<script> inline without the nonce")


def assert_strict_policy(response, url):
    header = response.get("Content-Security-Policy")
    assert header, f"{url}: no Content-Security-Policy"
    policy = directives(header)
    scripts = policy.get("script-src") or policy["default-src"]
    assert "'unsafe-inline'" not in scripts and "'unsafe-eval'" not in scripts, url
    assert policy["object-src"] == ["'none'"] and policy["base-uri"] == ["'none'"], url
    assert policy["frame-ancestors"] == ["'none'"], url
    nonces = [s for s in scripts if s.startswith("'nonce-")]
    assert len(nonces) == 1, url
    scan = _Scan(nonces[0][len("'nonce-") : -1])
    scan.feed(response.content.decode())
    assert scan.problems == [], (url, scan.problems)
    # htmx reads the first htmx-config tag only: one, and it forbids eval.
    if "htmx" in response.content.decode():
        assert len(scan.htmx_configs) == 1, (url, scan.htmx_configs)
        assert scan.htmx_configs[0]["allowEval"] is False, url
    return scan


@pytest.fixture
def world(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    annotator = member("expert", task.project)
    lead = member("chief", task.project, role=Membership.Role.LEAD)
    operator = User.objects.create_superuser("operator", password=PASSWORD)
    assignment = assignment_claim(annotator, task)
    return task.project, annotator, lead, operator, assignment


@pytest.mark.django_db
def test_every_kind_of_page_has_a_strict_policy(client, world):
    project, annotator, lead, operator, assignment = world
    anonymous = ["/accounts/login/", "/admin/login/", "/api/", "/api/docs/", "/api/redoc/"]
    pages = {
        None: anonymous,
        annotator: ["/", reverse("annotate", args=[assignment.pk]), "/accounts/password_change/"],
        lead: [
            reverse("dash-overview", args=[project.slug]),
            reverse("dash-judges", args=[project.slug]),
            reverse("run-list", args=[project.slug]),
            reverse("dash-exports", args=[project.slug]),
            reverse("judge-list", args=[project.slug]),
            reverse("judge-new", args=[project.slug]),
            reverse("template-list", args=[project.slug]),
            reverse("template-edit", args=[project.slug, "mmrb2-t2i"]),
        ],  # fmt: skip
        operator: ["/admin/", "/admin/content/pair/", "/api/docs/", "/api/projects/"],
    }
    for user, urls in pages.items():
        client.logout()
        if user is not None:
            client.force_login(user)
        for url in urls:
            response = client.get(url, HTTP_ACCEPT="text/html")
            assert response.status_code == 200, (url, response.status_code)
            assert_strict_policy(response, url)


@pytest.mark.django_db
def test_the_annotate_page_keeps_its_htmx_response_handling(client, world):
    """Found in review: base.html's htmx-config came first, so htmx ignored the annotate
    page's own (which swaps 409 and 422 answers in) and a refused rating showed nothing."""
    _project, annotator, _lead, _operator, assignment = world
    client.force_login(annotator)
    url = reverse("annotate", args=[assignment.pk])
    config = assert_strict_policy(client.get(url), url).htmx_configs[0]
    swapped = {rule["code"] for rule in config["responseHandling"] if rule["swap"]}
    assert {"409", "422"} <= swapped


@pytest.mark.django_db
def test_each_response_has_its_own_nonce(client):
    first, second = client.get("/accounts/login/"), client.get("/accounts/login/")
    assert first["Content-Security-Policy"] != second["Content-Security-Policy"]


@pytest.mark.django_db
def test_the_docs_start_up_scripts_carry_the_nonce(client):
    for url in ("/api/docs/", "/api/redoc/"):
        response = client.get(url)
        nonce = re.search(r"'nonce-([^']+)'", response["Content-Security-Policy"]).group(1)
        html = response.content.decode()
        assert "fonts.googleapis.com" not in html, url  # not allowed by the policy anyway
        if url == "/api/docs/":
            assert f'<script nonce="{nonce}">' in html


# ---------------------------------------------------------------- in Chromium


@pytest.mark.browser
@pytest.mark.django_db(transaction=True)
def test_no_policy_violation_in_the_browser(world, live_server, browser_page):
    project, annotator, lead, operator, assignment = world
    page = browser_page
    violations, requested = [], []
    page.on(
        "console",
        lambda m: violations.append(m.text) if "Content Security Policy" in m.text else None,
    )
    page.on("request", lambda r: requested.append(r.url))
    for url, ready in [("/api/docs/", ".swagger-ui .info"), ("/api/redoc/", "h1")]:
        page.goto(live_server.url + url)
        page.wait_for_selector(ready, timeout=15_000)  # the scripts ran and drew the page
    page.goto(live_server.url + reverse("login"))
    page.fill("input[name=username]", lead.username)
    page.fill("input[name=password]", PASSWORD)
    page.keyboard.press("Enter")
    page.wait_for_url(live_server.url + "/", timeout=10_000)
    for name in ("dash-overview", "dash-judges", "run-list", "dash-exports"):
        page.goto(live_server.url + reverse(name, args=[project.slug]))
        page.wait_for_load_state("load")
    page.goto(live_server.url + "/api/docs/")
    page.wait_for_selector(".swagger-ui .opblock", timeout=15_000)  # the schema loaded

    assert violations == []
    assert page.console_errors == []
    # Nothing leaves for another host (ReDoc's logo and fonts once came from a CDN).
    elsewhere = [u for u in requested if not u.startswith((live_server.url, "data:", "blob:"))]
    assert elsewhere == []
