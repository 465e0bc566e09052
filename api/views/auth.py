"""The token login for scripts (also: `manage.py drf_create_token USERNAME`)."""

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.exceptions import PermissionDenied, Throttled, ValidationError
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle

from api.serializers.common import ErrorSerializer, ValidationErrorSerializer
from core.client_address import client_address
from core.login_limits import login_failed, login_refusal, login_succeeded, refusal_message

PASSWORDS_OFF = (
    "Password sign-in is turned off on this server: make a token with "
    "`manage.py drf_create_token USERNAME` (operator), or sign in on the web."
)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenLoginThrottle(ScopedRateThrottle):
    """Attempts per minute and client address, the address read as the login limits read it."""

    def get_ident(self, request):
        return client_address(request)


class TokenView(ObtainAuthToken):
    """Username and password → the user's API token (created on first use)."""

    authentication_classes = []  # a stale token header must not stand in the way of a login
    # The API's parsers (api/parsers.py), not the ones ObtainAuthToken names: a body that is
    # not a JSON object is a 400 before `request.data.get` below could fail on it.
    # The stubs type the settings as written (dotted paths); api_settings imports them.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES  # type: ignore[assignment]
    throttle_classes = [TokenLoginThrottle]
    throttle_scope = "token-login"

    @extend_schema(
        summary="Your API token (send it as `Authorization: Token <key>`)",
        request=AuthTokenSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(ValidationErrorSerializer, description="Wrong credentials."),
            403: OpenApiResponse(
                ErrorSerializer, description="Password sign-in is turned off on this server."
            ),
            429: OpenApiResponse(
                ErrorSerializer,
                description=(
                    "Too many attempts from this address, or too many failed sign-ins for "
                    "this account (shared with the login pages); retry after `Retry-After` s."
                ),
            ),
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        # The same per-account and per-address failure limits as the login pages, so the
        # API is no way around them (core/login_limits.py).
        if not settings.ARBITER_PASSWORD_SIGN_IN:
            raise PermissionDenied(PASSWORDS_OFF)
        username = str(request.data.get("username") or "")
        wait = login_refusal(request, username)
        if wait is not None:
            raise Throttled(wait=wait, detail=refusal_message(wait))
        try:
            answer = super().post(request, *args, **kwargs)
        except ValidationError:
            login_failed(request, username)
            raise
        login_succeeded(request, username)
        return answer
