"""The account's API tokens page (/accounts/tokens/): a user lists, makes and revokes their
own tokens; the key is shown once, in the answer that made it; no one reaches another's."""

import io
import re
from datetime import timedelta

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError
from django.test import Client
from django.urls import reverse
from rest_framework.test import APIClient

from projects.models import ApiToken
from tests.factories import api_key, queued_pairs

pytestmark = pytest.mark.django_db

KEY = re.compile(r'id="new-token-key"[^>]*value="(arb_[^"]+)"')


@pytest.fixture
def project(tmp_path):
    """Alpha, the lead's; beta, a project the lead is not in."""
    queued_pairs(tmp_path / "b", project_slug="beta", count=1)
    return queued_pairs(tmp_path, project_slug="alpha", count=1).project


def _browser(user) -> Client:
    browser = Client()
    browser.force_login(user)
    return browser


def _answers(key: str, url="/api/projects/") -> int:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return api.get(url).status_code


def test_the_page_makes_a_token_shows_its_key_once_and_lists_it(lead):
    browser = _browser(lead)
    empty = browser.get(reverse("api-tokens"))
    assert empty.status_code == 200 and "no-store" in empty["Cache-Control"]
    alpha = lead.memberships.get().project
    made = browser.post(
        reverse("api-tokens"),
        {"name": "nightly export", "days": "7", "access": "read", "project": str(alpha.pk)},
    )
    assert made.status_code == 200 and "no-store" in made["Cache-Control"]
    key = KEY.search(made.content.decode()).group(1)
    token = ApiToken.objects.get(user=lead)
    assert (token.name, token.access, token.project_id) == ("nightly export", "read", alpha.pk)
    assert timedelta(days=6, hours=23) < token.expires_at - token.created_at <= timedelta(days=7)
    assert _answers(key) == 200
    listed = browser.get(reverse("api-tokens")).content.decode()
    assert "nightly export" in listed and token.prefix in listed
    assert key not in listed  # shown once: never again


def test_the_page_offers_only_the_users_projects_and_refuses_others(lead):
    browser = _browser(lead)
    page = browser.get(reverse("api-tokens")).content.decode()
    assert "alpha" in page and "beta" not in page
    beta = ApiToken._meta.get_field("project").related_model.objects.get(slug="beta")
    refused = browser.post(
        reverse("api-tokens"), {"name": "x", "days": "7", "access": "read", "project": beta.pk}
    )
    assert refused.status_code == 400 and not ApiToken.objects.exists()
    too_long = browser.post(reverse("api-tokens"), {"name": "x", "days": "366", "access": "read"})
    assert too_long.status_code == 400 and not ApiToken.objects.exists()


def test_several_tokens_are_revoked_one_at_a_time_from_the_page(lead):
    keys = [api_key(lead, name=f"pipe {n}") for n in range(3)]
    browser = _browser(lead)
    first = ApiToken.objects.get(name="pipe 0")
    answer = browser.post(reverse("api-token-revoke", args=[first.pk]), follow=True)
    assert answer.status_code == 200 and "pipe 0" in answer.content.decode()
    assert [_answers(key) for key in keys] == [401, 200, 200]
    assert browser.get(reverse("api-token-revoke", args=[first.pk])).status_code == 405


def test_no_one_revokes_or_sees_another_users_token(lead, tmp_path):
    other = User.objects.create_user("other", password="pw-other-1")
    key = api_key(lead, name="leads pipeline")
    token = ApiToken.objects.get()
    browser = _browser(other)
    assert "leads pipeline" not in browser.get(reverse("api-tokens")).content.decode()
    missing = browser.post(reverse("api-token-revoke", args=[10**6]))
    theirs = browser.post(reverse("api-token-revoke", args=[token.pk]))
    assert theirs.status_code == missing.status_code == 404
    assert _answers(key) == 200
    assert Client().get(reverse("api-tokens")).status_code == 302  # to the sign-in page


def test_an_operator_makes_a_token_for_a_user_by_command(lead):
    out, err = io.StringIO(), io.StringIO()
    call_command(
        "api_token_create", "boss", "--name", "ci", "--read-only", "--project", "alpha",
        "--days", "3", stdout=out, stderr=err,
    )  # fmt: skip
    key = out.getvalue().strip()
    token = ApiToken.objects.get()
    assert key.startswith(token.prefix) and token.read_only and token.project.slug == "alpha"
    assert "read-only" in err.getvalue() and key not in err.getvalue()
    assert _answers(key) == 200
    with pytest.raises(CommandError, match="no user"):
        call_command("api_token_create", "nobody", stdout=out, stderr=err)
    with pytest.raises(CommandError, match="one of your projects"):
        call_command("api_token_create", "boss", "--project", "beta", stdout=out, stderr=err)
