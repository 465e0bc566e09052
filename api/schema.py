"""OpenAPI: drf-spectacular's AutoSchema, plus the error answers every operation can give, so
that the schema declares each status code the API really returns.

- 401 without credentials, 403 when the caller may not do this (or a session write without
  its CSRF token), on every authenticated operation;
- 404 for an id the caller may not see (and for a page number past the end of a list);
- 400 (field messages) for operations with input: a body, query filters, or a list's
  `page` and `page_size` (api/pagination.py);
- 415 for a body in a media type the operation does not read;
- 405 on a detail operation whose id can spell a list action's route (`GET /api/pairs/import/`
  reaches the POST-only import action, not pair "import").
Operations add their own (409 ...) with `extend_schema(responses=...)`.

A request body whose serializer refuses unknown fields (`RefusesUnknownFields`) is declared
with `additionalProperties: false`, so that the schema does not invite fields the API refuses.
"""

from drf_spectacular.extensions import OpenApiAuthenticationExtension
from drf_spectacular.openapi import AutoSchema
from drf_spectacular.plumbing import build_bearer_security_scheme_object
from rest_framework import serializers
from rest_framework.permissions import AllowAny

from api.serializers.common import (
    ErrorSerializer,
    RefusesUnknownFields,
    ValidationErrorSerializer,
)

_WRITES = ("POST", "PUT", "PATCH")


class ApiTokenScheme(OpenApiAuthenticationExtension):
    """`Authorization: Token <key>` (api/authentication.py) in the schema, as `tokenAuth`."""

    target_class = "api.authentication.ApiTokenAuthentication"
    name = "tokenAuth"

    def get_security_definition(self, auto_schema):
        scheme = build_bearer_security_scheme_object(
            header_name="Authorization", token_prefix="Token"
        )
        scheme["description"] = (
            "An API token: expires; read-only tokens answer 403 to writes; a token limited to "
            "one project reaches nothing else (404); expired or revoked: 401."
        )
        return scheme


class ArbiterAutoSchema(AutoSchema):
    def get_override_parameters(self):
        """A list's filters (its view's `filter_serializer_class`) as query parameters."""
        parameters = super().get_override_parameters()
        filters = getattr(self.view, "filter_serializer_class", None)
        if filters is not None and self._is_list_view():
            parameters = [*parameters, filters]
        return parameters

    def _map_basic_serializer(self, serializer, direction):
        schema = super()._map_basic_serializer(serializer, direction)
        if direction == "request" and isinstance(serializer, RefusesUnknownFields):
            schema["additionalProperties"] = False
        return schema

    def _has_query_input(self) -> bool:
        if getattr(self.view, "query_serializer_class", None) is not None:
            return True
        if not self._is_list_view():
            return False
        paged = self._get_paginator() is not None  # `page`, `page_size`
        return paged or getattr(self.view, "filter_serializer_class", None) is not None

    def _get_response_bodies(self, direction="response"):
        responses = super()._get_response_bodies(direction)
        for code, serializer in self._error_responses().items():
            if code not in responses:
                responses[code] = self._get_response_for_code(serializer, code)
        return responses

    def _error_responses(self) -> dict:
        errors: dict[str, type[serializers.Serializer]] = {}
        permissions = self.view.get_permissions()
        public = not permissions or any(isinstance(p, AllowAny) for p in permissions)
        if not public:
            errors["401"] = ErrorSerializer
            errors["403"] = ErrorSerializer
        if "{" in self.path or self._is_list_view():
            errors["404"] = ErrorSerializer
        has_body = self.method in _WRITES and self.get_request_serializer() is not None
        if has_body or self._has_query_input():
            errors["400"] = ValidationErrorSerializer
        if has_body:
            errors["415"] = ErrorSerializer
        if self._shadowed_by_a_list_action():
            errors["405"] = ErrorSerializer
        return errors

    def _shadowed_by_a_list_action(self) -> bool:
        actions = getattr(self.view, "get_extra_actions", None)
        if actions is None or not self.path.endswith("}/"):
            return False
        method = self.method.lower()
        return any(not action.detail and method not in action.mapping for action in actions())
