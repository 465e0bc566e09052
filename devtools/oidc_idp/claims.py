"""The claims of the test users: e-mail, whether it is verified, and their groups, from the
JSON the test passed (IDP_USERS)."""

import json
import os

from django.utils.translation import gettext_lazy as _
from oidc_provider.lib.claims import ScopeClaims


def _users() -> dict[str, dict]:
    return {user["username"]: user for user in json.loads(os.environ["IDP_USERS"])}


def subject(user) -> str:
    return _users()[user.username].get("sub") or f"sub-{user.username}"


def userinfo(claims: dict, user) -> dict:
    info = _users()[user.username]
    claims["preferred_username"] = user.username
    claims["name"] = info.get("name", user.username)
    claims["email"] = info.get("email", "")
    claims["email_verified"] = bool(info.get("email_verified", False))
    return claims


class GroupsClaims(ScopeClaims):
    info_groups = (_("Groups"), _("The groups you belong to."))

    def scope_groups(self) -> dict:
        return {"groups": list(_users()[self.user.username].get("groups", []))}
