"""Sign-in through the organisation's OpenID provider: the authorization code flow with PKCE
and a nonce, through mozilla-django-oidc, configured only by the operator's ARBITER_OIDC_*
settings (off without ARBITER_OIDC_ISSUER: every route here answers 404).

What is checked before anyone is signed in (the library does the first three; the rest is
ours, the library checking neither audience nor issuer):
- `state`: it must be one this browser's session started, and it is spent on first use
  (a forged or replayed callback is refused before any code is exchanged);
- the code is exchanged once, by the server, with the client secret and the PKCE verifier
  (a replayed or stolen code is refused by the provider);
- the id token's signature, with the provider's JWKS and only the configured algorithm,
  and its nonce, which must be the one this sign-in sent;
- its `iss` must equal ARBITER_OIDC_ISSUER exactly, its `aud` must contain our client id
  (and `azp` be it when there are several), `exp` must be in the future; `iss`, `aud`,
  `exp`, `iat` and `sub` must be present; the userinfo's `sub` must be the id token's.

Every call to the provider (the discovery document, the code's exchange, the JWKS, the
userinfo) goes through Arbiter's outbound client (core/outbound.py: no redirect followed, a
private address refused unless ARBITER_ALLOW_PRIVATE_ADDRESSES), not the library's `requests`.

Then projects/services/identities.py turns the verified claims into an account. Every
refusal answers a small page at a 4xx status saying why (502 when the provider cannot be
reached) and fires Django's `user_login_failed`; a success is Django's `login()`, which fires
`user_logged_in`. Not counted by core/login_limits.py: nothing here can be guessed (the state
is bound to the session, the code to the secret and the verifier); the provider limits
password guessing on its own sign-in page.
"""

import json
import logging
import time
from dataclasses import dataclass
from typing import Any

import jwt
from django.conf import settings
from django.contrib.auth import get_user_model, login, user_login_failed
from django.contrib.auth.backends import ModelBackend
from django.core.exceptions import SuspiciousOperation
from django.http import Http404, HttpRequest, HttpResponse, HttpResponseRedirect
from django.shortcuts import render, resolve_url
from django.utils.translation import gettext
from django.views import View
from mozilla_django_oidc.auth import OIDCAuthenticationBackend
from mozilla_django_oidc.views import OIDCAuthenticationRequestView

from core.errors import DomainError
from core.outbound import Answer, FetchFailed, fetch, json_fetch
from projects.services.identities import identity_sign_in

logger = logging.getLogger(__name__)
BACKEND = "config.oidc.OrganisationBackend"
_DISCOVERY_SECONDS = 3600


def oidc_enabled() -> bool:
    return bool(settings.ARBITER_OIDC_ISSUER)


@dataclass(frozen=True)
class Endpoints:
    authorization: str
    token: str
    jwks: str
    userinfo: str  # "" : the id token's claims only


class ProviderUnreachable(Exception):
    pass


class CodeRefused(Exception):
    """The provider refused to exchange the code (a 4xx): replayed, expired, or not ours."""


class ClaimsRefused(Exception):
    """The provider's claims are not usable (no subject, a userinfo about someone else).
    Not SuspiciousOperation: the library would swallow that into a silent None."""


_discovered: dict[str, tuple[float, Endpoints]] = {}


def provider_endpoints() -> Endpoints:
    """The operator's endpoints, or the discovery document of the operator's issuer (whose
    `issuer` must be the configured one), kept an hour per process."""
    if settings.ARBITER_OIDC_AUTHORIZATION_ENDPOINT:
        return Endpoints(
            settings.ARBITER_OIDC_AUTHORIZATION_ENDPOINT,
            settings.ARBITER_OIDC_TOKEN_ENDPOINT,
            settings.ARBITER_OIDC_JWKS_ENDPOINT,
            settings.ARBITER_OIDC_USERINFO_ENDPOINT,
        )
    issuer = settings.ARBITER_OIDC_ISSUER
    kept = _discovered.get(issuer)
    if kept and time.monotonic() - kept[0] < _DISCOVERY_SECONDS:
        return kept[1]
    url = issuer.rstrip("/") + "/.well-known/openid-configuration"
    try:
        document = _provider_document(url)
        if not isinstance(document, dict) or document.get("issuer") != issuer:
            raise ValueError("the discovery document names another issuer")
        endpoints = Endpoints(
            str(document["authorization_endpoint"]),
            str(document["token_endpoint"]),
            str(document["jwks_uri"]),
            str(document.get("userinfo_endpoint") or ""),
        )
    except (ProviderUnreachable, ValueError, KeyError) as error:
        logger.warning("OIDC discovery at %s failed: %s", url, error)
        raise ProviderUnreachable(str(error)) from None
    _discovered[issuer] = (time.monotonic(), endpoints)
    return endpoints


def _provider_call(url: str, **request: Any) -> Answer:
    """One call to the provider through Arbiter's outbound client (core/outbound.py), in
    ARBITER_OIDC_TIMEOUT_SECONDS; its answer whatever the status, ProviderUnreachable when
    there was none (a private address refused, a timeout)."""
    try:
        return fetch(url, total_seconds=settings.ARBITER_OIDC_TIMEOUT_SECONDS, **request)
    except FetchFailed as error:
        logger.warning("OIDC call to %s failed: %s", url, error)
        raise ProviderUnreachable(str(error)) from None


def _provider_document(url: str) -> Any:
    """A document of the provider's (discovery, JWKS) through Arbiter's outbound client
    (core/outbound.py): no redirect followed, a private address refused unless the operator
    allows them, ARBITER_OIDC_TIMEOUT_SECONDS in all."""
    try:
        return json_fetch(url, total_seconds=settings.ARBITER_OIDC_TIMEOUT_SECONDS)
    except FetchFailed as error:
        raise ProviderUnreachable(str(error)) from None


def _library_setting(attr: str, *default: Any) -> Any:
    """What mozilla-django-oidc asks for, answered from Arbiter's ARBITER_OIDC_* settings
    (read at each call, so a test's override holds) and Arbiter's fixed choices."""
    fixed = {
        "OIDC_RP_CLIENT_ID": settings.ARBITER_OIDC_CLIENT_ID,
        "OIDC_RP_CLIENT_SECRET": settings.ARBITER_OIDC_CLIENT_SECRET,
        "OIDC_RP_SIGN_ALGO": settings.ARBITER_OIDC_SIGN_ALGO,
        "OIDC_RP_SCOPES": settings.ARBITER_OIDC_SCOPES,
        "OIDC_TIMEOUT": settings.ARBITER_OIDC_TIMEOUT_SECONDS,
        "OIDC_USE_PKCE": True,
        "OIDC_PKCE_CODE_CHALLENGE_METHOD": "S256",
        "OIDC_USE_NONCE": True,
        "OIDC_VERIFY_SSL": True,
        "OIDC_VERIFY_KID": True,
        "OIDC_ALLOW_UNSECURED_JWT": False,  # never alg "none"
        "OIDC_STORE_ACCESS_TOKEN": False,
        "OIDC_STORE_ID_TOKEN": False,
        "OIDC_RP_IDP_SIGN_KEY": None,  # the key comes from the provider's JWKS
        "OIDC_AUTHENTICATION_CALLBACK_URL": "oidc-callback",
        "OIDC_REDIRECT_FIELD_NAME": "next",
    }
    if attr in fixed:
        return fixed[attr]
    return getattr(settings, attr, *default)


class OrganisationBackend(OIDCAuthenticationBackend):
    """mozilla-django-oidc's backend with the checks it leaves out (module docstring) and
    Arbiter's accounts (projects/services/identities.py). Listed in AUTHENTICATION_BACKENDS
    so that sessions it opened are read back; it answers only the callback's call."""

    get_settings = staticmethod(_library_setting)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        # Not the library's __init__: it wants the endpoints as settings, and ours may come
        # from discovery, which only a sign-in should wait for.
        self.UserModel = get_user_model()
        self.OIDC_RP_CLIENT_ID = settings.ARBITER_OIDC_CLIENT_ID
        self.OIDC_RP_CLIENT_SECRET = settings.ARBITER_OIDC_CLIENT_SECRET
        self.OIDC_RP_SIGN_ALGO = settings.ARBITER_OIDC_SIGN_ALGO
        self.OIDC_RP_IDP_SIGN_KEY = None

    def authenticate(self, request: HttpRequest | None, **kwargs: Any) -> Any:
        if request is None or not oidc_enabled() or "code_verifier" not in kwargs:
            return None  # a password sign-in: not ours
        endpoints = provider_endpoints()
        self.OIDC_OP_TOKEN_ENDPOINT = endpoints.token
        self.OIDC_OP_JWKS_ENDPOINT = endpoints.jwks
        self.OIDC_OP_USER_ENDPOINT = endpoints.userinfo
        return super().authenticate(request, **kwargs)

    def get_token(self, payload: dict[str, Any]) -> Any:
        """The code exchanged for the tokens (the client's secret in the form, the library's
        default), through the outbound client."""
        answer = _provider_call(self.OIDC_OP_TOKEN_ENDPOINT, method="POST", data=payload)
        if 400 <= answer.status < 500:
            raise CodeRefused(f"the token endpoint answered HTTP {answer.status}")
        if answer.status != 200:
            raise ProviderUnreachable(f"the token endpoint answered HTTP {answer.status}")
        try:
            tokens = json.loads(answer.body)
        except ValueError:
            raise ProviderUnreachable("the token endpoint's answer is not JSON") from None
        if not isinstance(tokens, dict):
            raise ProviderUnreachable("the token endpoint's answer is not an object")
        return tokens

    def retrieve_matching_jwk(self, token: str) -> Any:
        """The provider's key for this id token (the kid and algorithm of its header, as the
        library chooses), from the JWKS fetched through the outbound client, not `requests`."""
        try:
            jwks = _provider_document(self.OIDC_OP_JWKS_ENDPOINT)
        except ProviderUnreachable as error:
            logger.warning("OIDC JWKS at %s failed: %s", self.OIDC_OP_JWKS_ENDPOINT, error)
            raise
        header = jwt.get_unverified_header(token)
        keys = jwks.get("keys") if isinstance(jwks, dict) else None
        chosen = None
        for key in keys if isinstance(keys, list) else []:
            if not isinstance(key, dict) or key.get("kid") != header.get("kid"):
                continue
            if "alg" in key and key["alg"] != header.get("alg"):
                continue
            chosen = key
        if chosen is None:
            raise SuspiciousOperation("no key of the provider's JWKS matches the id token")
        return jwt.PyJWK(chosen)

    def _verify_jws(self, payload: str, key: Any) -> dict[str, Any]:
        header = jwt.get_unverified_header(payload)
        if header.get("alg") != self.OIDC_RP_SIGN_ALGO:
            raise SuspiciousOperation("the id token is not signed with the configured algorithm")
        claims = jwt.decode(
            payload,
            key,
            algorithms=[self.OIDC_RP_SIGN_ALGO],
            audience=self.OIDC_RP_CLIENT_ID,
            issuer=settings.ARBITER_OIDC_ISSUER,
            options={"require": ["iss", "aud", "exp", "iat", "sub"]},
            leeway=60,
        )
        audience = claims["aud"]
        several = isinstance(audience, list) and len(audience) > 1
        if several and claims.get("azp") != self.OIDC_RP_CLIENT_ID:
            raise SuspiciousOperation("the id token was issued to another party (azp)")
        return claims

    def get_userinfo(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = dict(payload)
        if self.OIDC_OP_USER_ENDPOINT:
            answer = _provider_call(
                self.OIDC_OP_USER_ENDPOINT, headers={"Authorization": f"Bearer {access_token}"}
            )
            if answer.status != 200:
                raise ProviderUnreachable(f"the userinfo endpoint answered HTTP {answer.status}")
            if answer.content_type.lower().startswith("application/jwt"):
                info = self.verify_token(answer.body.decode())  # a signed userinfo
            else:
                info = json.loads(answer.body)  # not JSON: refused as the id token would be
            if not isinstance(info, dict) or info.get("sub") != payload.get("sub"):
                raise ClaimsRefused("the userinfo is about someone else")
            # The id token's own claims win: they are the signed ones.
            claims = {**info, **claims}
        return claims

    def verify_claims(self, claims: dict[str, Any]) -> bool:
        return isinstance(claims.get("sub"), str) and bool(claims["sub"])

    def get_or_create_user(self, access_token: str, id_token: str, payload: dict[str, Any]) -> Any:
        claims = self.get_userinfo(access_token, id_token, payload)
        if not self.verify_claims(claims):
            raise ClaimsRefused("the provider did not name the person")
        return identity_sign_in(
            issuer=settings.ARBITER_OIDC_ISSUER,
            claims=claims,
            role_claim=settings.ARBITER_OIDC_ROLE_CLAIM,
            operator_values=settings.ARBITER_OIDC_OPERATOR_VALUES,
            lead_values=settings.ARBITER_OIDC_LEAD_VALUES,
        )

    def get_user(self, user_id: Any) -> Any:
        # Django's rule (an inactive account's session ends), not the library's, and a
        # session opened here ends when the operator turns OIDC off.
        if not oidc_enabled():
            return None
        return ModelBackend.get_user(self, user_id)


# The pages


def _refuse(request: HttpRequest, reason: str, message: str, status: int) -> HttpResponse:
    """The refusal page; `user_login_failed` for the audit trail (what the provider said,
    never a token)."""
    user_login_failed.send(
        sender=__name__,
        credentials={"provider": settings.ARBITER_OIDC_ISSUER, "reason": reason},
        request=request,
    )
    logger.info("OIDC sign-in refused (%s): %s", reason, message)
    context = {"message": message, "provider_name": settings.ARBITER_OIDC_NAME}
    return render(request, "registration/oidc_refused.html", context, status=status)


def _unreachable(request: HttpRequest) -> HttpResponse:
    return _refuse(
        request,
        "provider-unreachable",
        gettext("The sign-in provider could not be reached. Try again in a moment."),
        502,
    )


class AuthenticateView(OIDCAuthenticationRequestView):
    """/oidc/authenticate/: a new state, nonce and PKCE verifier in the session, then off to
    the provider's sign-in page."""

    get_settings = staticmethod(_library_setting)

    def __init__(self, **kwargs: Any) -> None:
        View.__init__(self, **kwargs)  # not the library's: it reads endpoints from settings

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_enabled():
            raise Http404("sign-in through a provider is off")
        try:
            self.OIDC_OP_AUTH_ENDPOINT = provider_endpoints().authorization
        except ProviderUnreachable:
            return _unreachable(request)
        self.OIDC_RP_CLIENT_ID = settings.ARBITER_OIDC_CLIENT_ID
        redirect: HttpResponse = super().get(request)
        return redirect


class CallbackView(View):
    """/oidc/callback/: where the provider sends the browser back with `code` and `state`."""

    http_method_names = ["get"]

    def get(self, request: HttpRequest) -> HttpResponse:
        if not oidc_enabled():
            raise Http404("sign-in through a provider is off")
        states = request.session.get("oidc_states")
        state = request.GET.get("state", "")
        if not isinstance(states, dict) or not state or state not in states:
            return _refuse(
                request,
                "state",
                gettext(
                    "This sign-in was not started here, or it was finished already. "
                    "Start again from the sign-in page."
                ),
                400,
            )
        started = states.pop(state)  # spent now, whatever follows: no second try with it
        request.session["oidc_states"] = states
        request.session.save()
        if request.GET.get("error") or not request.GET.get("code"):
            return _refuse(
                request,
                "provider-error",
                gettext("The provider did not sign you in."),
                400,
            )
        try:
            user = OrganisationBackend().authenticate(
                request, nonce=started.get("nonce"), code_verifier=started.get("code_verifier")
            )
        except ProviderUnreachable:
            return _unreachable(request)
        except DomainError as error:  # the account's refusal (projects/services/identities.py)
            return _refuse(request, "account", error.message, error.status)
        except CodeRefused:
            return _refuse(
                request,
                "code",
                gettext("The provider refused this sign-in. Start again from the sign-in page."),
                400,
            )
        except (
            ClaimsRefused,
            SuspiciousOperation,
            jwt.PyJWTError,
            ValueError,
            KeyError,
            TypeError,
        ) as error:
            logger.warning("OIDC id token refused: %s", error)
            return _refuse(
                request,
                "id-token",
                gettext("The provider's answer did not pass Arbiter's checks."),
                400,
            )
        if user is None:  # the library's own refusals end in None (a claim it would not take)
            return _refuse(
                request,
                "id-token",
                gettext("The provider's answer did not pass Arbiter's checks."),
                400,
            )
        if not user.is_active:
            return _refuse(request, "account", gettext("This account is turned off."), 403)
        login(request, user, backend=BACKEND)
        return HttpResponseRedirect(
            request.session.pop("oidc_login_next", None) or resolve_url(settings.LOGIN_REDIRECT_URL)
        )
