"""Local passwords turned off by the operator: the sign-in form, password reset, the API's
token and the admin's form refuse with a 4xx saying so, whatever the password; the
provider's button stays; the settings refuse passwords off with no provider."""

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.test import override_settings

from config.env import EnvError
from config.oidc_settings import check_oidc_settings
from projects.models import ExternalIdentity

pytestmark = pytest.mark.django_db

PASSWORD = "pw-operator-12345"


@pytest.fixture
def passwords_off(settings):
    settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
    settings.ARBITER_OIDC_NAME = "Lab ID"
    settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
    settings.ARBITER_OIDC_CLIENT_SECRET = "secret"
    settings.ARBITER_PASSWORD_SIGN_IN = False
    settings.EMAIL_BACKEND = "django.core.mail.backends.locmem.EmailBackend"
    settings.EMAIL_HOST = "mail.lab.example"  # reset would exist: it is the switch that refuses


@pytest.fixture
def operator():
    return User.objects.create_superuser("root", email="root@lab.example", password=PASSWORD)


def test_the_sign_in_page_shows_only_the_providers_button(client, passwords_off):
    page = client.get("/accounts/login/").content.decode()
    assert "Sign in with Lab ID" in page
    assert 'name="password"' not in page
    assert "password_reset" not in page


def test_the_right_password_is_refused_with_a_403_saying_why(client, passwords_off, operator):
    answer = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert answer.status_code == 403
    assert "Password sign-in is turned off on this server." in answer.content.decode()
    assert "_auth_user_id" not in client.session


def test_password_reset_pages_answer_403(client, passwords_off, operator):
    for path in ("/accounts/password_reset/", "/accounts/password_reset/done/"):
        assert client.get(path).status_code == 403
    answer = client.post("/accounts/password_reset/", {"email": "root@lab.example"})
    assert answer.status_code == 403


def test_the_api_token_endpoint_refuses_the_right_password(client, passwords_off, operator):
    answer = client.post(
        "/api/auth/token/",
        {"username": "root", "password": PASSWORD},
        content_type="application/json",
    )
    assert answer.status_code == 403
    assert "turned off" in answer.json()["detail"]


def test_the_admin_sends_to_the_sign_in_page_and_its_form_checks_no_password(
    client, passwords_off, operator
):
    answer = client.get("/admin/login/?next=/admin/")
    assert answer.status_code == 302 and answer["Location"].startswith("/accounts/login/")
    client.post("/admin/login/", {"username": "root", "password": PASSWORD})
    assert "_auth_user_id" not in client.session


def test_with_passwords_on_the_same_password_signs_in(client, settings, operator):
    settings.ARBITER_PASSWORD_SIGN_IN = True
    answer = client.post("/accounts/login/", {"username": "root", "password": PASSWORD})
    assert answer.status_code == 302 and client.session["_auth_user_id"] == str(operator.pk)


def _values(**changes):
    values = {
        "ARBITER_PASSWORD_SIGN_IN": True,
        "ARBITER_OIDC_ISSUER": "",
        "ARBITER_OIDC_CLIENT_ID": "",
        "ARBITER_OIDC_CLIENT_SECRET": "",
        "ARBITER_OIDC_SIGN_ALGO": "RS256",
        "ARBITER_OIDC_SCOPES": "openid email",
        "ARBITER_OIDC_AUTHORIZATION_ENDPOINT": "",
        "ARBITER_OIDC_TOKEN_ENDPOINT": "",
        "ARBITER_OIDC_JWKS_ENDPOINT": "",
    }
    return {**values, **changes}


@pytest.mark.parametrize(
    ("changes", "named"),
    [
        ({"ARBITER_PASSWORD_SIGN_IN": False}, "ARBITER_PASSWORD_SIGN_IN"),
        ({"ARBITER_OIDC_ISSUER": "https://id"}, "ARBITER_OIDC_CLIENT_ID"),
        (
            {"ARBITER_OIDC_ISSUER": "https://id", "ARBITER_OIDC_CLIENT_ID": "a"},
            "ARBITER_OIDC_CLIENT_SECRET",
        ),
        (
            {
                "ARBITER_OIDC_ISSUER": "https://id",
                "ARBITER_OIDC_CLIENT_ID": "a",
                "ARBITER_OIDC_CLIENT_SECRET": "s",
                "ARBITER_OIDC_SIGN_ALGO": "none",
            },
            "ARBITER_OIDC_SIGN_ALGO",
        ),
        (
            {
                "ARBITER_OIDC_ISSUER": "https://id",
                "ARBITER_OIDC_CLIENT_ID": "a",
                "ARBITER_OIDC_CLIENT_SECRET": "s",
                "ARBITER_OIDC_SIGN_ALGO": "PS256",  # the library would check it with the secret
            },
            "ARBITER_OIDC_SIGN_ALGO",
        ),
        (
            {
                "ARBITER_OIDC_ISSUER": "https://id",
                "ARBITER_OIDC_CLIENT_ID": "a",
                "ARBITER_OIDC_CLIENT_SECRET": "s",
                "ARBITER_OIDC_TOKEN_ENDPOINT": "https://id/token",
            },
            "ARBITER_OIDC_AUTHORIZATION_ENDPOINT",
        ),
    ],
)
def test_a_half_configured_provider_stops_the_start_naming_the_variable(changes, named):
    with pytest.raises(EnvError, match=named):
        check_oidc_settings(_values(**changes))


def test_the_operator_links_an_existing_account_to_a_providers_subject(settings, operator):
    settings.ARBITER_OIDC_ISSUER = "https://id.lab.example"
    call_command("oidc_link", "root", "sub-42")
    identity = ExternalIdentity.objects.get()
    assert (identity.issuer, identity.subject, identity.user) == (
        "https://id.lab.example",
        "sub-42",
        operator,
    )


@override_settings(ARBITER_OIDC_ISSUER="")
def test_the_providers_routes_answer_404_while_it_is_off(client):
    assert client.get("/oidc/authenticate/").status_code == 404
    assert client.get("/oidc/callback/?code=x&state=y").status_code == 404


def test_an_invitation_link_makes_no_password_account_and_sends_to_the_provider(
    client, passwords_off, tmp_path
):
    from tests.factories import invitation, member, queued_pairs

    task = queued_pairs(tmp_path, project_slug="team", count=1)
    link = f"/invite/{invitation(task.project, member('boss', task.project, 'lead')).token}/"
    page = client.get(link).content.decode()
    assert 'name="password1"' not in page
    assert f"/accounts/login/?next={link}" in page
    answer = client.post(link, {"username": "newbie", "password1": PASSWORD, "password2": PASSWORD})
    assert answer.status_code == 403
    assert not User.objects.filter(username="newbie").exists()
