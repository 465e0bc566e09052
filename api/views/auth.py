"""The token login for scripts (also: `manage.py drf_create_token USERNAME`)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken
from rest_framework.throttling import ScopedRateThrottle

from api.serializers.common import ErrorSerializer, ValidationErrorSerializer


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenView(ObtainAuthToken):
    """Username and password → the user's API token (created on first use)."""

    authentication_classes = []  # a stale token header must not stand in the way of a login
    throttle_classes = [ScopedRateThrottle]
    throttle_scope = "token-login"

    @extend_schema(
        summary="Your API token (send it as `Authorization: Token <key>`)",
        request=AuthTokenSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(ValidationErrorSerializer, description="Wrong credentials."),
            429: OpenApiResponse(
                ErrorSerializer,
                description="Too many attempts from this address; retry after `Retry-After` s.",
            ),
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
