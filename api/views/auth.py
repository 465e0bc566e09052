"""The token login for scripts (also: `manage.py drf_create_token USERNAME`)."""

from drf_spectacular.utils import OpenApiResponse, extend_schema
from rest_framework import serializers
from rest_framework.authtoken.serializers import AuthTokenSerializer
from rest_framework.authtoken.views import ObtainAuthToken

from api.serializers.common import ValidationErrorSerializer


class TokenSerializer(serializers.Serializer):
    token = serializers.CharField()


class TokenView(ObtainAuthToken):
    """Username and password → the user's API token (created on first use)."""

    authentication_classes = []  # a stale token header must not stand in the way of a login

    @extend_schema(
        summary="Your API token (send it as `Authorization: Token <key>`)",
        request=AuthTokenSerializer,
        responses={
            200: TokenSerializer,
            400: OpenApiResponse(ValidationErrorSerializer, description="Wrong credentials."),
        },
        auth=[],
    )
    def post(self, request, *args, **kwargs):
        return super().post(request, *args, **kwargs)
