"""Tokens, the session with its CSRF check, and the schema and its documentation pages."""

import re

import pytest
from rest_framework.test import APIClient

from projects.models import ApiToken
from projects.models.api_token import api_key_digest
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
    assert ApiToken.objects.get(user=world.ann_a).digest == api_key_digest(token)
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
    assert not ApiToken.objects.filter(user=world.ann_a).exists()
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


@pytest.mark.parametrize(
    ("page", "script"),
    [
        ("/api/docs/", "/static/drf_spectacular_sidecar/swagger-ui-dist/swagger-ui-bundle.js"),
        ("/api/redoc/", "/api/redoc/redoc.standalone.js"),
    ],
)
def test_documentation_pages_use_vendored_files(db, page, script):
    answer = APIClient().get(page)
    assert answer.status_code == 200
    html = answer.content.decode()
    assert f'<script src="{script}">' in html
    assert "cdn." not in html and "unpkg" not in html and "fonts.g" not in html
    assert "/api/schema/" in html
    assert not re.search(r"""(src|href)=["']?(https?:)?//""", html)  # nothing from elsewhere


def test_the_redoc_bundle_names_no_other_host_to_load_from(db):
    answer = APIClient().get("/api/redoc/redoc.standalone.js")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/javascript")
    code = answer.content.decode()
    assert "Redoc" in code and len(code) > 500_000  # the whole bundle
    assert "cdn.redoc.ly" not in code and "fonts.googleapis" not in code
    assert not code.rstrip().endswith(".js.map")  # its source map is not served here
    assert APIClient().post("/api/redoc/redoc.standalone.js").status_code == 405


def test_the_api_root_is_an_index_of_links(world):
    client = APIClient()
    answer = client.get("/api/")
    assert answer.status_code == 200
    index = answer.json()
    base = "http://testserver/api/"
    assert {k: index[k] for k in ("schema", "docs", "redoc", "token")} == {
        "schema": base + "schema/", "docs": base + "docs/", "redoc": base + "redoc/",
        "token": base + "auth/token/",
    }  # fmt: skip
    assert set(index["collections"]) >= {"projects", "tasks", "pairs", "judges", "runs"}
    for url in index["collections"].values():
        assert url.startswith(base)
        assert client.get(url).status_code == 401, url  # each one exists and asks for a login
    assert client.get(index["schema"]).status_code == 200
    assert client.post("/api/").status_code == 405
    schema = client.get("/api/schema/", HTTP_ACCEPT="application/vnd.oai.openapi+json").json()
    assert "/api/" not in schema["paths"]


def test_unknown_api_paths_answer_json_404(db):
    answer = APIClient().get("/api/no/such/thing/")
    assert answer.status_code == 404 and answer.json() == {"detail": "Not found."}
