"""Refusals that need no browser: a provider that cannot be reached (502, never a 500), a
callback with no sign-in started (400), and the sessions the provider opened, which end with
the account's deactivation or the operator's turning the provider off."""

import socket

import pytest
from django.contrib.auth.models import User

from config import oidc
from config.oidc import OrganisationBackend

pytestmark = pytest.mark.django_db


def _closed_port() -> int:
    with socket.socket() as probe:  # a port nothing listens on once this closes
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@pytest.fixture
def unreachable(settings):
    settings.ARBITER_OIDC_ISSUER = f"http://127.0.0.1:{_closed_port()}/realm"
    settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
    settings.ARBITER_OIDC_CLIENT_SECRET = "secret"
    settings.ARBITER_OIDC_TIMEOUT_SECONDS = 2
    oidc._discovered.clear()


def test_a_provider_that_cannot_be_reached_answers_502_saying_so(
    client, unreachable, failed_sign_ins
):
    answer = client.get("/oidc/authenticate/")
    assert answer.status_code == 502
    assert "could not be reached" in answer.content.decode()
    assert failed_sign_ins[-1]["reason"] == "provider-unreachable"


def test_a_callback_without_a_sign_in_started_here_answers_400(
    client, unreachable, failed_sign_ins
):
    answer = client.get("/oidc/callback/?code=stolen&state=made-up")
    assert answer.status_code == 400
    assert failed_sign_ins[-1]["reason"] == "state"
    assert "_auth_user_id" not in client.session


def test_a_provider_session_ends_with_the_account_or_with_the_provider(settings):
    settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
    user = User.objects.create_user("ann")
    assert OrganisationBackend().get_user(user.pk) == user
    settings.ARBITER_OIDC_ISSUER = ""
    assert OrganisationBackend().get_user(user.pk) is None
    settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
    User.objects.filter(pk=user.pk).update(is_active=False)
    assert OrganisationBackend().get_user(user.pk) is None
