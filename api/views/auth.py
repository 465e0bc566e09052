"""The token login for scripts: username and password → a new API token (the others:
the account page, /accounts/tokens/, and `manage.py api_token_create`)."""

from django.conf import settings
from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import renderers, serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.exceptions import PermissionDenied, Throttled, ValidationError
from rest_framework.permissions import AllowAny
from rest_framework.response import Response
from rest_framework.settings import api_settings
from rest_framework.throttling import ScopedRateThrottle
from rest_framework.views import APIView

from api.serializers.common import ErrorSerializer, ValidationErrorSerializer
from core.client_address import client_address
from core.login_limits import login_failed, login_refusal, login_succeeded, refusal_message
from projects.services.api_tokens import api_token_create

# The name of the tokens this endpoint makes (the account page lists them under it).
SIGN_IN_TOKEN_NAME = "POST /api/auth/token/"

PASSWORDS_OFF = (
    "Password sign-in is turned off on this server: sign in on the web and make a token on "
    "your account page (/accounts/tokens/), or ask an operator "
    "(`manage.py api_token_create USERNAME`)."
)


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField(help_text="The key: shown this once, stored only hashed.")
    name = serializers.CharField()
    prefix = serializers.CharField(help_text="The key's first characters, as lists show it.")
    expires_at = serializers.DateTimeField()


class TokenLoginThrottle(ScopedRateThrottle):
    """Attempts per minute and client address, the address read as the login limits read it."""

    def get_ident(self, request):
        return client_address(request)


class TokenView(APIView):
    """Username and password → a new API token of the user: read-write, all of their
    projects, the default lifetime (settings.ARBITER_API_TOKEN_DAYS)."""

    authentication_classes = []  # a stale token header must not stand in the way of a login
    permission_classes = [AllowAny]
    renderer_classes = [renderers.JSONRenderer]
    # The API's parsers (api/parsers.py): a body that is not a JSON object is a 400 before
    # `request.data.get` below could fail on it.
    # The stubs type the settings as written (dotted paths); api_settings imports them.
    parser_classes = api_settings.DEFAULT_PARSER_CLASSES  # type: ignore[assignment]
    throttle_classes = [TokenLoginThrottle]
    throttle_scope = "token-login"

    @extend_schema(
        summary="A new API token (send it as `Authorization: Token <key>`)",
        description=(
            "Each call makes a new token: read-write, reaching all of your projects, expiring "
            "after the server's default lifetime. At the most usable tokens allowed, the "
            "oldest token made by this endpoint is revoked to make room (those made on the "
            "account page never are). Make read-only or one-project tokens on your account "
            "page (/accounts/tokens/)."
        ),
        request=AuthTokenSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(ValidationErrorSerializer, description="Wrong credentials."),
            403: OpenApiResponse(
                ErrorSerializer, description="Password sign-in is turned off on this server."
            ),
            409: OpenApiResponse(
                ErrorSerializer,
                description=(
                    "You hold the most usable tokens allowed, none of them made by this endpoint."
                ),
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
        serializer = AuthTokenSerializer(data=request.data, context={"request": request})
        try:
            serializer.is_valid(raise_exception=True)
        except ValidationError:
            login_failed(request, username)
            raise
        login_succeeded(request, username)
        user = serializer.validated_data["user"]
        created = api_token_create(user=user, name=SIGN_IN_TOKEN_NAME, from_sign_in=True)
        token = created.token
        return Response(
            TokenSerializer(
                {
                    "token": created.key,
                    "name": token.name,
                    "prefix": token.prefix,
                    "expires_at": token.expires_at,
                }
            ).data
        )
