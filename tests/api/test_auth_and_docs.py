"""Tokens, the session with its CSRF check, and the schema and its documentation pages."""

import pytest
from rest_framework.authtoken.models import Token
from rest_framework.test import APIClient

from tests.api.conftest import PASSWORD


def test_no_credentials_is_a_401(world):
    client = APIClient()
    for url in ("/api/projects/", "/api/judges/", f"/api/pairs/{1}/"):
        answer = client.get(url)
        assert answer.status_code == 401
        assert answer["WWW-Authenticate"] == "Token"
    assert client.post(f"/api/tasks/{world.alpha_task.pk}/claim/").status_code == 401
    bad = APIClient(HTTP_AUTHORIZATION="Token nope")
    assert bad.get("/api/projects/").status_code == 401


def test_a_token_for_username_and_password(world):
    client = APIClient()
    answer = client.post("/api/auth/token/", {"username": "ann_a", "password": PASSWORD})
    assert answer.status_code == 200
    token = answer.json()["token"]
    assert token == Token.objects.get(user=world.ann_a).key
    client.credentials(HTTP_AUTHORIZATION=f"Token {token}")
    assert client.get("/api/projects/").json()["count"] == 1
    wrong = APIClient().post("/api/auth/token/", {"username": "ann_a", "password": "nope"})
    assert wrong.status_code == 400 and "non_field_errors" in wrong.json()
    stale = APIClient(HTTP_AUTHORIZATION="Token stale")
    login = stale.post("/api/auth/token/", {"username": "ann_a", "password": PASSWORD})
    assert login.status_code == 200  # a stale token header does not stand in the way


def test_password_guessing_is_slowed_per_address_and_a_forged_header_does_not_help(world, settings):
    limit = settings.REST_FRAMEWORK["DEFAULT_THROTTLE_RATES"]["token-login"]
    assert limit == "20/minute"
    for attempt in range(20):
        # A new name each time: the per-account limit (tests/trust/test_login_limits.py) stays out
        # of the way, so this shows the per-address one.
        guess = {"username": f"guess{attempt}", "password": "guess"}
        forged = {"HTTP_X_FORWARDED_FOR": f"10.0.0.{attempt}"}
        assert APIClient().post("/api/auth/token/", guess, **forged).status_code == 400
    refused = APIClient().post("/api/auth/token/", {"username": "ann_a", "password": PASSWORD})
    assert refused.status_code == 429
    assert int(refused["Retry-After"]) > 0
    assert not Token.objects.filter(user=world.ann_a).exists()
    elsewhere = APIClient(REMOTE_ADDR="192.0.2.7")
    answer = elsewhere.post("/api/auth/token/", {"username": "ann_a", "password": PASSWORD})
    assert answer.status_code == 200  # other addresses are not locked out


def test_the_session_works_and_writes_need_the_csrf_token(world):
    client = APIClient(enforce_csrf_checks=True)
    assert client.login(username="ann_a", password=PASSWORD)
    assert client.get("/api/projects/").json()["results"][0]["slug"] == "alpha"
    url = f"/api/tasks/{world.alpha_task.pk}/claim/"
    refused = client.post(url)
    assert refused.status_code == 403 and "CSRF" in refused.json()["detail"]
    client.get("/accounts/login/")  # sets the CSRF cookie
    token = client.cookies["csrftoken"].value
    answer = client.post(url, HTTP_X_CSRFTOKEN=token)
    assert answer.status_code == 200 and answer.json()["assignment"]["status"] == "leased"


def test_the_schema_is_openapi_3_and_public(db):
    answer = APIClient().get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json")
    assert answer.status_code == 200
    schema = answer.json()
    assert schema["openapi"].startswith("3.")
    paths = set(schema["paths"])
    for path in ("/api/projects/{project}/report/", "/api/tasks/{id}/claim/",
                 "/api/assignments/{id}/rating/", "/api/pairs/import/", "/api/judges/{id}/",
                 "/api/runs/{id}/cancel/", "/api/verdicts/import/", "/api/auth/token/",
                 "/api/projects/{project}/exports/{id}/download/"):  # fmt: skip
        assert path in paths
    assert "tokenAuth" in schema["components"]["securitySchemes"]


@pytest.mark.parametrize("page", ["/api/docs/", "/api/redoc/"])
def test_documentation_pages_use_vendored_files(db, page):
    answer = APIClient().get(page)
    assert answer.status_code == 200
    html = answer.content.decode()
    assert "/static/drf_spectacular_sidecar/" in html
    assert "cdn." not in html and "unpkg" not in html
    assert "/api/schema/" in html


def test_unknown_api_paths_answer_json_404(db):
    answer = APIClient().get("/api/no/such/thing/")
    assert answer.status_code == 404 and answer.json() == {"detail": "Not found."}
