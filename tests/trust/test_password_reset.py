"""Password reset exists only where mail does, and is counted like sign-ins:
without EMAIL_HOST Django tried localhost:25 on every request, and nothing limited
how many mails one client could have sent."""

import smtplib

import pytest
from django.conf import global_settings
from django.contrib.auth.models import User
from django.core import mail
from django.core.cache import cache
from django.test import Client

from core import login_limits

pytestmark = pytest.mark.django_db

RESET = "/accounts/password_reset/"


@pytest.fixture(autouse=True)
def _one_window(monkeypatch):
    """One fixed window (a test that crossed a real window's end would see its count restart),
    and fresh counters."""
    monkeypatch.setattr(login_limits, "_window", lambda: (4242, 600))
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def expert():
    return User.objects.create_user("expert", email="expert@example.org", password="pw-x-12345")


@pytest.fixture
def no_mail_server(settings):
    """The production settings without EMAIL_HOST: Django's defaults (SMTP to localhost)."""
    settings.EMAIL_BACKEND = global_settings.EMAIL_BACKEND
    settings.EMAIL_HOST = global_settings.EMAIL_HOST


@pytest.fixture
def mail_server(settings):
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.EMAIL_HOST = "mail.example.org"


def test_without_a_mail_server_there_is_no_password_reset(
    client, expert, no_mail_server, monkeypatch
):
    connections = []
    monkeypatch.setattr(smtplib, "SMTP", lambda *a, **k: connections.append(a) or 1 / 0)
    assert client.get(RESET).status_code == 404
    assert client.post(RESET, {"email": expert.email}).status_code == 404
    for page in ("/accounts/password_reset/done/", "/accounts/reset/done/", "/accounts/reset/M/x/"):
        assert client.get(page).status_code == 404
    assert connections == []
    assert RESET not in client.get("/accounts/login/").content.decode()


def test_with_a_mail_server_the_sign_in_page_offers_the_reset(client, expert, mail_server):
    assert RESET in client.get("/accounts/login/").content.decode()
    assert client.post(RESET, {"email": expert.email}).status_code == 302
    assert [m.to for m in mail.outbox] == [[expert.email]]


def test_reset_requests_for_one_address_are_limited(expert, mail_server, settings):
    limit = settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT
    answers = []
    for number in range(limit + 3):
        # From ever new client addresses: the submitted address's own count stops them.
        client = Client(REMOTE_ADDR=f"198.51.100.{number + 1}")
        answers.append(client.post(RESET, {"email": " Expert@Example.org"}).status_code)
    assert answers == [302] * limit + [429] * 3
    assert len(mail.outbox) <= limit


def test_reset_requests_from_one_client_address_are_limited(expert, mail_server, settings):
    settings.ARBITER_LOGIN_FAILURES_PER_ADDRESS = 5
    client = Client(REMOTE_ADDR="203.0.113.9")
    answers = [
        client.post(RESET, {"email": f"guess{number}@example.org"}).status_code
        for number in range(5)
    ]
    refused = client.post(RESET, {"email": expert.email})
    assert answers == [302] * 5
    assert refused.status_code == 429 and int(refused["Retry-After"]) > 0
    assert "Too many password reset requests" in refused.content.decode()
    assert mail.outbox == []  # the real address asked for last was not mailed either
