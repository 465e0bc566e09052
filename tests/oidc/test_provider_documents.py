"""Every call to the sign-in provider (discovery, the code's exchange, the JWKS, the userinfo)
goes through the outbound client (core/outbound.py): a provider on a private address is
refused unless the operator allows those, and a redirect is never followed."""

import json

import jwt
import pytest

from config import oidc
from config.oidc import CodeRefused, OrganisationBackend, ProviderUnreachable, provider_endpoints
from tests.loopback import LoopbackServer, QuietHandler

SECRET = "0123456789abcdef0123456789abcdef"  # the JWKS's one key (HS256), a test's
KEY = "MDEyMzQ1Njc4OWFiY2RlZjAxMjM0NTY3ODlhYmNkZWY"  # SECRET, base64url


class Documents:
    """A provider's documents on 127.0.0.1: discovery under /good, a redirect to it under
    /moved, a JWKS at /jwks; every path asked is recorded."""

    def __init__(self):
        self.paths: list[str] = []
        documents = self

        class Handler(QuietHandler):
            def do_GET(self):
                documents.paths.append(self.path)
                if self.path == "/moved/.well-known/openid-configuration":
                    self.send_response(302)
                    self.send_header("Location", "/good/.well-known/openid-configuration")
                    self.end_headers()
                    return
                if self.path == "/good/.well-known/openid-configuration":
                    body = {
                        "issuer": f"{documents.site}/good",
                        "authorization_endpoint": f"{documents.site}/authorize",
                        "token_endpoint": f"{documents.site}/token",
                        "jwks_uri": f"{documents.site}/jwks",
                    }
                elif self.path == "/jwks":
                    body = {"keys": [{"kty": "oct", "kid": "k1", "alg": "HS256", "k": KEY}]}
                else:
                    self.send_response(404)
                    self.end_headers()
                    return
                raw = json.dumps(body).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(raw)))
                self.end_headers()
                self.wfile.write(raw)

            def do_POST(self):  # the token endpoint: this code was never issued
                documents.paths.append(f"POST {self.path}")
                self.send_response(400)
                self.send_header("Content-Length", "0")
                self.end_headers()

        self.served = LoopbackServer(Handler)
        self.site = self.served.site

    def close(self):
        self.served.close()


@pytest.fixture
def documents(settings):
    settings.ARBITER_OIDC_CLIENT_ID = "arbiter"
    settings.ARBITER_OIDC_CLIENT_SECRET = "not-a-secret"
    served = Documents()
    oidc._discovered.clear()
    yield served
    oidc._discovered.clear()
    served.close()


def _token() -> str:
    return jwt.encode({"sub": "ann"}, SECRET, algorithm="HS256", headers={"kid": "k1"})


def test_discovery_and_the_jwks_are_fetched_when_private_addresses_are_allowed(documents, settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
    settings.ARBITER_OIDC_ISSUER = f"{documents.site}/good"
    endpoints = provider_endpoints()
    assert endpoints.jwks == f"{documents.site}/jwks"
    backend = OrganisationBackend()
    backend.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
    assert backend.retrieve_matching_jwk(_token()).key_id == "k1"
    assert documents.paths == ["/good/.well-known/openid-configuration", "/jwks"]


@pytest.mark.django_db
def test_a_provider_on_a_private_address_is_refused_unless_allowed(documents, settings, client):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = False
    settings.ARBITER_OIDC_ISSUER = f"{documents.site}/good"
    with pytest.raises(ProviderUnreachable, match="private"):
        provider_endpoints()
    backend = OrganisationBackend()
    backend.OIDC_OP_JWKS_ENDPOINT = f"{documents.site}/jwks"
    with pytest.raises(ProviderUnreachable, match="private"):
        backend.retrieve_matching_jwk(_token())
    backend.OIDC_OP_TOKEN_ENDPOINT = f"{documents.site}/token"
    with pytest.raises(ProviderUnreachable, match="private"):
        backend.get_token({"code": "abc"})
    backend.OIDC_OP_USER_ENDPOINT = f"{documents.site}/userinfo"
    with pytest.raises(ProviderUnreachable, match="private"):
        backend.get_userinfo("access", "id", {"sub": "ann"})
    page = client.get("/oidc/authenticate/")
    assert page.status_code == 502, page.content[:500]
    assert documents.paths == []  # refused at connect time: nothing reached the server


def test_a_redirect_of_the_discovery_document_is_not_followed(documents, settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
    settings.ARBITER_OIDC_ISSUER = f"{documents.site}/moved"
    with pytest.raises(ProviderUnreachable, match="redirect"):
        provider_endpoints()
    assert documents.paths == ["/moved/.well-known/openid-configuration"]


def test_a_redirect_of_the_jwks_is_not_followed(documents, settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
    backend = OrganisationBackend()
    backend.OIDC_OP_JWKS_ENDPOINT = f"{documents.site}/moved/.well-known/openid-configuration"
    with pytest.raises(ProviderUnreachable, match="redirect"):
        backend.retrieve_matching_jwk(_token())
    assert documents.paths == ["/moved/.well-known/openid-configuration"]


def test_a_code_the_token_endpoint_refuses_is_a_refusal_not_an_outage(documents, settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
    backend = OrganisationBackend()
    backend.OIDC_OP_TOKEN_ENDPOINT = f"{documents.site}/token"
    with pytest.raises(CodeRefused):
        backend.get_token({"code": "never-issued", "client_id": "arbiter"})
    assert documents.paths == ["POST /token"]
