"""Password guessing against every login: the site's form, the admin's and the API token,
limited per account and per client address (core/login_limits.py)."""

import re

import pytest
from django.contrib.auth.models import User
from django.test import Client, RequestFactory
from rest_framework.test import APIClient

from core import login_limits
from core.client_address import client_address
from projects.models import ApiToken

PASSWORD = "pw-limits-1"
REFUSED = re.compile(r"Too many failed sign-ins; try again in \d+ minutes?\.")

pytestmark = pytest.mark.django_db


REAL_WINDOW = login_limits._window


@pytest.fixture(autouse=True)
def _no_counted_failures(settings, monkeypatch):
    """The counters live in the cache, which is Redis (outliving a test) when REDIS_URL is set.
    One fixed window: a test that crossed a real window's end would see its count restart."""
    from django.core.cache import cache

    monkeypatch.setattr(login_limits, "_window", lambda: (4242, 600))
    cache.clear()
    yield
    cache.clear()


@pytest.fixture
def expert():
    return User.objects.create_user("expert", password=PASSWORD)


def sign_in(username, password, url="/accounts/login/", address="127.0.0.1", **headers):
    client = Client(REMOTE_ADDR=address)
    answer = client.post(url, {"username": username, "password": password}, **headers)
    return answer, client


def signed_in(client) -> bool:
    return "_auth_user_id" in client.session


def test_sixty_wrong_passwords_then_the_right_one_is_refused(expert):
    for _ in range(60):
        answer, client = sign_in("expert", "guess")
        assert not signed_in(client)
    answer, client = sign_in("expert", PASSWORD)
    assert answer.status_code == 200 and not signed_in(client)
    assert REFUSED.search(answer.content.decode())


def test_the_account_limit_holds_from_any_address_and_any_spelling(settings, expert):
    limit = settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT
    assert limit == 10
    for attempt in range(limit):
        answer, _ = sign_in("expert", "guess", address=f"192.0.2.{attempt}")
        assert "correct username and password" in answer.content.decode()
    answer, client = sign_in("EXPERT", PASSWORD, address="198.51.100.1")
    assert REFUSED.search(answer.content.decode())
    answer, client = sign_in("expert", PASSWORD, address="198.51.100.2")
    assert REFUSED.search(answer.content.decode()) and not signed_in(client)


def test_unknown_and_known_usernames_are_answered_alike(settings, expert, monkeypatch):
    """No user enumeration: the same counting and the same message whether the name exists."""
    answers = {}
    for name in ("expert", "nobody"):
        for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
            first, _ = sign_in(name, "guess", address="192.0.2.10")
        refused, _ = sign_in(name, "guess", address="192.0.2.11")
        answers[name] = (first.status_code, refused.status_code, REFUSED.findall(
            refused.content.decode()))  # fmt: skip
    assert answers["expert"] == answers["nobody"]
    assert answers["expert"][2]


def test_a_success_clears_the_account_counter(settings, expert):
    for _ in range(2):
        for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT - 1):
            sign_in("expert", "guess")
        answer, client = sign_in("expert", PASSWORD)
        assert answer.status_code == 302 and signed_in(client)


def test_a_missing_password_neither_counts_nor_clears(settings, expert):
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        sign_in("expert", "guess")
    sign_in("expert", "")  # no password: nothing was checked, the counter stays
    answer, client = sign_in("expert", PASSWORD)
    assert REFUSED.search(answer.content.decode()) and not signed_in(client)


def test_the_address_limit_covers_many_usernames(settings, expert):
    settings.ARBITER_LOGIN_FAILURES_PER_ADDRESS = 5
    for n in range(5):
        sign_in(f"user{n}", "guess", address="203.0.113.5")
    answer, client = sign_in("expert", PASSWORD, address="203.0.113.5")
    assert REFUSED.search(answer.content.decode()) and not signed_in(client)
    # A forged X-Forwarded-For does not make another address (no proxy is trusted).
    answer, client = sign_in(
        "expert", PASSWORD, address="203.0.113.5", HTTP_X_FORWARDED_FOR="192.0.2.99"
    )
    assert not signed_in(client)
    answer, client = sign_in("expert", PASSWORD, address="203.0.113.6")
    assert signed_in(client)


def test_the_window_ends(settings, monkeypatch, expert):
    now = [1_000_000.0]
    monkeypatch.setattr(login_limits, "_window", REAL_WINDOW)
    monkeypatch.setattr(login_limits.time, "time", lambda: now[0])
    settings.ARBITER_LOGIN_WINDOW_SECONDS = 600
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        sign_in("expert", "guess")
    answer, _ = sign_in("expert", PASSWORD)
    # 1_000_000 % 600 = 400 s into the window: 200 s left.
    assert "try again in 4 minutes" in answer.content.decode()
    now[0] += 200
    answer, client = sign_in("expert", PASSWORD)
    assert signed_in(client)


def test_the_admin_login_is_limited_too(settings):
    User.objects.create_superuser("operator", password=PASSWORD)
    for _ in range(60):
        sign_in("operator", "guess", url="/admin/login/")
    answer, client = sign_in("operator", PASSWORD, url="/admin/login/")
    assert answer.status_code == 200 and not signed_in(client)
    assert REFUSED.search(answer.content.decode())


def test_the_admin_and_the_site_share_the_account_counter(settings, expert):
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        sign_in("expert", "guess", url="/admin/login/")
    answer, client = sign_in("expert", PASSWORD)
    assert REFUSED.search(answer.content.decode()) and not signed_in(client)


def test_the_api_token_shares_the_account_limit(settings, expert):
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        sign_in("expert", "guess", address="192.0.2.20")
    api = APIClient(REMOTE_ADDR="192.0.2.21")
    answer = api.post("/api/auth/token/", {"username": "expert", "password": PASSWORD})
    assert answer.status_code == 429 and int(answer["Retry-After"]) > 0
    assert REFUSED.search(answer.json()["detail"])
    assert not ApiToken.objects.filter(user=expert).exists()


def test_spaces_around_the_name_do_not_make_a_new_account_count(settings, expert):
    """Found in review: the API strips the name before signing in but counted it as typed,
    so "expert " got ten more guesses (and a token) after "expert" was locked."""
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        sign_in("expert", "guess", address="192.0.2.40")
    for number, spelling in enumerate(["expert ", " expert", "\texpert\n", "EXPERT "]):
        api = APIClient(REMOTE_ADDR=f"192.0.2.{41 + number}")
        answer = api.post("/api/auth/token/", {"username": spelling, "password": PASSWORD})
        assert answer.status_code == 429, spelling
    assert not ApiToken.objects.filter(user=expert).exists()


def test_failed_api_logins_lock_the_login_page(settings, expert):
    api = APIClient(REMOTE_ADDR="192.0.2.30")
    for _ in range(settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT):
        answer = api.post("/api/auth/token/", {"username": "expert", "password": "guess"})
        assert answer.status_code == 400
    answer, client = sign_in("expert", PASSWORD, address="192.0.2.31")
    assert REFUSED.search(answer.content.decode()) and not signed_in(client)


# ---------------------------------------------------------------- the client address


@pytest.mark.parametrize(
    ("proxies", "forwarded", "expected"),
    [
        (0, "192.0.2.1", "10.0.0.1"),  # nothing trusted: the header is ignored
        (1, "", "10.0.0.1"),
        (1, "192.0.2.1", "192.0.2.1"),
        (1, "6.6.6.6, 192.0.2.1", "192.0.2.1"),  # the client's own forged entry is left of it
        (2, "6.6.6.6, 192.0.2.1, 10.0.0.2", "192.0.2.1"),
        (3, "192.0.2.1", "192.0.2.1"),  # fewer entries than proxies: the leftmost
    ],
)
def test_client_address(settings, proxies, forwarded, expected):
    settings.ARBITER_TRUSTED_PROXIES = proxies
    headers = {"HTTP_X_FORWARDED_FOR": forwarded} if forwarded else {}
    request = RequestFactory().get("/", REMOTE_ADDR="10.0.0.1", **headers)
    assert client_address(request) == expected


def test_the_api_throttle_reads_the_address_the_same_way(settings):
    from rest_framework.request import Request

    from api.views.auth import TokenLoginThrottle

    settings.ARBITER_TRUSTED_PROXIES = 1
    request = RequestFactory().post(
        "/", REMOTE_ADDR="10.0.0.1", HTTP_X_FORWARDED_FOR="6.6.6.6, 192.0.2.1"
    )
    assert TokenLoginThrottle().get_ident(Request(request)) == "192.0.2.1"
