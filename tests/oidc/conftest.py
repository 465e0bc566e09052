"""A real OpenID provider (devtools/oidc_idp: django-oidc-provider in its own process, on a
free port of 127.0.0.1) for the sign-in tests, and Arbiter's settings pointing at it."""

import json
import selectors
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from django.contrib.auth import user_login_failed
from django.core.cache import cache

from config import oidc
from tests.waiting import wait_until

ROOT = Path(__file__).resolve().parents[2]
CLIENT_ID = "arbiter"
CLIENT_SECRET = "arbiter-test-secret"  # the provider's test client, not a real secret
PROVIDER_NAME = "Test Lab"
START_SECONDS = 90

# The provider's people: the e-mail claim, whether the provider verified it, the groups claim.
USERS = [
    {"username": "ann", "email": "ann@lab.example", "email_verified": True},
    {"username": "bea", "email": "bea@lab.example", "email_verified": True},
    {"username": "cy", "email": "cy@lab.example", "email_verified": True, "groups": ["ops"]},
    {"username": "dan", "email": "dan@lab.example", "email_verified": True, "groups": ["pi"]},
    {"username": "eve", "email": "eve@lab.example", "email_verified": False},
    {"username": "fay", "email": "fay@lab.example", "email_verified": True},
]
for _user in USERS:
    _user["password"] = f"provider-{_user['username']}-pw"


@dataclass(frozen=True)
class Provider:
    issuer: str  # http://127.0.0.1:PORT/openid
    site: str  # http://127.0.0.1:PORT


def _ready_line(process: subprocess.Popen) -> str:
    watch = selectors.DefaultSelector()
    watch.register(process.stdout, selectors.EVENT_READ)

    def issuer() -> str | None:
        while watch.select(timeout=0):  # the lines written so far, never a blocked read
            line = process.stdout.readline()
            if line.startswith("ready "):
                return line.split()[1]
            if not line:  # the end of its output: `hopeless` says why next
                return None
        return None

    return wait_until(
        issuer,
        START_SECONDS,
        "the OpenID provider to start",
        every=0.05,
        hopeless=lambda: process.poll() is not None and f"it stopped: {process.stderr.read()}",
    )


@pytest.fixture(scope="session")
def provider(live_server):
    """The provider, with Arbiter's callback as its client's only redirect URI."""
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "devtools.oidc_idp",
            "--redirect-uri",
            f"{live_server.url}/oidc/callback/",
            "--users",
            json.dumps(USERS),
            "--client-id",
            CLIENT_ID,
            "--client-secret",
            CLIENT_SECRET,
        ],
        cwd=ROOT,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        issuer = _ready_line(process)
        yield Provider(issuer=issuer, site=issuer.removesuffix("/openid"))
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


@pytest.fixture
def oidc_on(settings, provider):
    """Arbiter signs in through the provider, found by discovery from its issuer."""
    settings.ARBITER_OIDC_ISSUER = provider.issuer
    settings.ARBITER_OIDC_NAME = PROVIDER_NAME
    settings.ARBITER_OIDC_CLIENT_ID = CLIENT_ID
    settings.ARBITER_OIDC_CLIENT_SECRET = CLIENT_SECRET
    settings.ARBITER_OIDC_SCOPES = "openid email profile groups"
    settings.ARBITER_OIDC_ROLE_CLAIM = "groups"
    settings.ARBITER_OIDC_OPERATOR_VALUES = ["ops"]
    settings.ARBITER_OIDC_LEAD_VALUES = ["pi"]
    oidc._discovered.clear()
    cache.clear()
    yield provider
    oidc._discovered.clear()


@pytest.fixture
def failed_sign_ins():
    """What `user_login_failed` was sent with, for the audit trail."""
    seen: list[dict] = []

    def _record(sender, credentials, request=None, **_):
        seen.append(dict(credentials))

    user_login_failed.connect(_record, dispatch_uid="tests-oidc-failed")
    yield seen
    user_login_failed.disconnect(dispatch_uid="tests-oidc-failed")


def password_of(username: str) -> str:
    return next(user["password"] for user in USERS if user["username"] == username)
