"""A password change or reset ends the API tokens issued under the old password:
whoever knew the old password may have taken a token with it. Every token of the
account, however it was made (the token endpoint, the account page, an operator's command)."""

import re

import pytest
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.core.management import call_command
from django.test import Client
from rest_framework.test import APIClient

from projects.models import ApiToken
from projects.models.api_token import api_key_digest
from tests.factories import api_key

pytestmark = pytest.mark.django_db

OLD = "violet-harbour-lantern-42"
NEW = "amber-meadow-compass-77"


@pytest.fixture(autouse=True)
def _fresh_limits():
    cache.clear()  # sign-in counters
    yield
    cache.clear()


@pytest.fixture
def expert():
    return User.objects.create_user("expert", email="expert@example.org", password=OLD)


def _token(username, password) -> str:
    answer = APIClient().post(
        "/api/auth/token/", {"username": username, "password": password}, format="json"
    )
    assert answer.status_code == 200, answer.content
    return answer.json()["token"]


def _answers(token) -> int:
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    return api.get("/api/projects/").status_code


def test_changing_the_password_on_its_page_ends_the_old_tokens(expert):
    old = _token("expert", OLD)
    made_on_the_page = api_key(expert, name="nightly export", access="read")
    assert _answers(old) == _answers(made_on_the_page) == 200
    browser = Client()
    browser.force_login(expert)
    changed = browser.post(
        "/accounts/password_change/",
        {"old_password": OLD, "new_password1": NEW, "new_password2": NEW},
    )
    assert changed.status_code == 302
    assert _answers(old) == _answers(made_on_the_page) == 401
    assert not ApiToken.objects.filter(revoked_at__isnull=True).exists()
    new = _token("expert", NEW)
    assert new != old and _answers(new) == 200


def test_resetting_the_password_by_mail_ends_the_old_tokens(expert, settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    old = _token("expert", OLD)
    made_on_the_page = api_key(expert, name="nightly export")
    browser = Client()
    assert browser.post("/accounts/password_reset/", {"email": expert.email}).status_code == 302
    link = re.search(r"https?://[^/\s]+(/accounts/reset/\S+/)", mail.outbox[0].body).group(1)
    form = browser.get(link, follow=True)
    assert form.status_code == 200
    done = browser.post(form.redirect_chain[-1][0], {"new_password1": NEW, "new_password2": NEW})
    assert done.status_code == 302
    assert _answers(old) == _answers(made_on_the_page) == 401
    assert _token("expert", NEW) != old


def test_set_password_in_a_service_or_a_command_ends_the_old_token(expert, monkeypatch):
    old = _token("expert", OLD)
    expert.set_password(NEW)
    expert.save()
    assert _answers(old) == 401
    second = _token("expert", NEW)
    monkeypatch.setattr("getpass.getpass", lambda prompt="": OLD)
    call_command("changepassword", "expert", stdout=None)
    assert _answers(second) == 401


def test_signing_in_and_other_saves_keep_the_token(expert):
    token = _token("expert", OLD)
    assert Client().post("/accounts/login/", {"username": "expert", "password": OLD}).status_code
    expert.refresh_from_db()
    expert.first_name = "Ex"
    expert.save()
    assert _answers(token) == 200
    assert ApiToken.objects.get().digest == api_key_digest(token)
