"""`Authorization: Token <key>`: the API tokens of projects/services/api_tokens.py.

Every refused key (unknown, revoked, expired, of an inactive account, malformed) answers the
same 401 with the same body, so a holder cannot tell a revoked key from a made-up one. A
token's own limits are applied here, for every view at once, rather than by each view:

- limited to one project: the loaded user's scopes are narrowed to it
  (projects/access.py `limit_to_project`), so every other project's objects answer 404 like
  missing ones and lists hold that project's only;
- read-only: anything but GET, HEAD and OPTIONS answers 403. Here rather than in a permission
  class, so that no view's own `permission_classes` can leave it out.
"""

from django.conf import settings
from rest_framework import exceptions
from rest_framework.authentication import BaseAuthentication, get_authorization_header
from rest_framework.permissions import SAFE_METHODS

from projects.access import limit_to_project
from projects.services.api_tokens import api_token_use

KEYWORD = "Token"
REFUSED = "Invalid token."
READ_ONLY = "This API token is read-only: it may only read (GET, HEAD, OPTIONS)."


class ApiTokenAuthentication(BaseAuthentication):
    def authenticate(self, request):
        words = get_authorization_header(request).split()
        if not words or words[0].lower() != KEYWORD.lower().encode():
            return None  # no token: the session may still authenticate
        if len(words) != 2:
            raise exceptions.AuthenticationFailed(REFUSED)
        try:
            key = words[1].decode("ascii")
        except UnicodeError:
            raise exceptions.AuthenticationFailed(REFUSED) from None
        token = api_token_use(key=key, provider_sign_in_on=bool(settings.ARBITER_OIDC_ISSUER))
        if token is None:
            raise exceptions.AuthenticationFailed(REFUSED)
        user = token.user
        if token.project_id is not None:
            limit_to_project(user, token.project_id)
        if token.read_only and request.method not in SAFE_METHODS:
            raise exceptions.PermissionDenied(READ_ONLY)
        return (user, token)

    def authenticate_header(self, request):
        return KEYWORD
