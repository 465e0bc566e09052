"""API tokens: keys for scripts and pipelines, several per user.

Rules:
- A key is `arb_` and 32 random bytes (`secrets.token_urlsafe(32)`, 256 bits). The database
  keeps its SHA-256 and its first 12 characters (to recognise it in a list), never the key:
  `api_token_create` returns it once, for its holder to copy. A copy of the database lets no
  one in.
- Every token expires: `settings.ARBITER_API_TOKEN_DAYS` days by default, at most
  `ARBITER_API_TOKEN_MAX_DAYS`. A user holds at most `ARBITER_API_TOKENS_PER_USER` usable
  tokens (a script that asks for a new one on every run is told to revoke some, rather than
  leaving an unbounded pile of live keys).
- A token is read-only or read-write, and reaches all of its user's projects or one of them
  (one the user belongs to when it is made). It never gives more than its user has: the
  scopes are the user's own, narrowed (projects/access.py `limit_to_project`).
- A revoked or expired token, or one whose user is inactive, is refused exactly like a key
  that never existed (`api_token_use` answers None for all of them).
- A password change or reset revokes every token of the user (api/signals.py calls
  `api_tokens_revoke_all`).

Concurrency: `api_token_create` and `api_tokens_revoke_all` lock the user's row, so that two
creations at once cannot both pass the count and no token made during a password change
outlives it; a revocation locks the token's row and saves it (so the audit trail records it;
revoking twice is harmless).
"""

import hmac
import secrets
from dataclasses import dataclass
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth import get_user_model
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import QuerySet
from django.utils import timezone
from django.utils.translation import gettext

from core.errors import Invalid, NotFound, Refused
from projects.access import member_projects
from projects.models import ApiToken, ExternalIdentity, Project
from projects.models.api_token import api_key_digest, usable_at

KEY_PREFIX = "arb_"
SHOWN_CHARACTERS = 12  # "arb_" and 8 characters of the key: recognisable, useless alone
NAME_LENGTH = 100
# A token's last use is written at most this often: a pipeline's thousand requests a minute
# cost one UPDATE a minute, not a thousand.
LAST_USED_EVERY = timedelta(seconds=60)


def default_days() -> int:
    return settings.ARBITER_API_TOKEN_DAYS


def max_days() -> int:
    return settings.ARBITER_API_TOKEN_MAX_DAYS


def max_tokens() -> int:
    return settings.ARBITER_API_TOKENS_PER_USER


@dataclass(frozen=True)
class CreatedApiToken:
    token: ApiToken
    key: str  # the secret: show it once, never store it


def api_token_create(
    *,
    user: User,
    name: str,
    days: int | None = None,
    access: str = ApiToken.Access.WRITE,
    project: Project | None = None,
    from_sign_in: bool = False,
) -> CreatedApiToken:
    """A new token of `user` and its key. Invalid (400) for a wrong name, lifetime, access or
    a project the user does not belong to; Refused (409) past the number of usable tokens.
    A token `from_sign_in` (POST /api/auth/token/) at the cap revokes the user's oldest usable
    one from a sign-in to make room, so a script that signs in on every run keeps working;
    Refused only when every usable token was made otherwise."""
    errors: dict[str, list[str]] = {}
    name = (name or "").strip()
    if not name or len(name) > NAME_LENGTH:
        errors["name"] = [
            gettext("Give the token a name of 1 to %(length)s characters.")
            % {"length": NAME_LENGTH}
        ]
    days = default_days() if days is None else days
    if not isinstance(days, int) or isinstance(days, bool) or not 1 <= days <= max_days():
        errors["days"] = [gettext("Choose between 1 and %(days)s days.") % {"days": max_days()}]
    if access not in ApiToken.Access.values:
        errors["access"] = [gettext("Choose read-only or read and write.")]
    if project is not None and not member_projects(user).filter(pk=project.pk).exists():
        errors["project"] = [gettext("Choose one of your projects.")]
    if errors:
        raise Invalid(next(iter(errors.values()))[0], fields=errors)
    key = KEY_PREFIX + secrets.token_urlsafe(32)
    now = timezone.now()
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user.pk).first()
        usable_tokens = ApiToken.objects.filter(usable_at(now), user=user)
        usable = usable_tokens.count()
        if from_sign_in and usable >= max_tokens():
            over = usable - max_tokens() + 1
            oldest = usable_tokens.filter(from_sign_in=True).order_by("created_at", "id")
            usable -= _revoke(_locked(oldest[:over]), now)
        if usable >= max_tokens():
            raise Refused(
                gettext(
                    "You have %(count)s tokens in use, the most allowed: revoke one on your "
                    "account page first."
                )
                % {"count": usable}
            )
        token = ApiToken.objects.create(
            user=user,
            name=name,
            prefix=key[:SHOWN_CHARACTERS],
            digest=api_key_digest(key),
            access=access,
            project=project,
            expires_at=now + timedelta(days=days),
            from_sign_in=from_sign_in,
        )
    return CreatedApiToken(token=token, key=key)


def _locked(tokens: QuerySet[ApiToken]) -> list[ApiToken]:
    # Their user loaded: the audit trail names whose token changed.
    return list(tokens.select_for_update(of=("self",)).select_related("user"))


def _revoke(tokens: list[ApiToken], now: datetime) -> int:
    """Revoke these locked tokens, row by row (a bulk update would send the audit trail no
    signal); how many."""
    for token in tokens:
        token.revoked_at = now
        token.save(update_fields=["revoked_at"])
    return len(tokens)


def api_token_revoke(*, user: User, token_id: int) -> ApiToken:
    """Revoke one of the user's own tokens (NotFound for anyone else's, like a missing id)."""
    with transaction.atomic():
        found = _locked(ApiToken.objects.filter(user=user, pk=token_id))
        if not found:
            raise NotFound(gettext("No such token."))
        if found[0].revoked_at is None:  # revoking twice changes nothing
            _revoke(found, timezone.now())
    return found[0]


def api_tokens_revoke_all(*, user_id: int) -> int:
    """Revoke every token of the user that still lets its holder in (an expired one needs no
    revoking); how many. At most the cap of usable tokens, each recorded in the trail."""
    now = timezone.now()
    with transaction.atomic():
        get_user_model().objects.select_for_update().filter(pk=user_id).first()
        return _revoke(_locked(ApiToken.objects.filter(usable_at(now), user_id=user_id)), now)


def api_token_use(
    *, key: str, provider_sign_in_on: bool = True, now: datetime | None = None
) -> ApiToken | None:
    """The usable token whose key this is, its user loaded, its last use recorded; None for
    anything else (unknown, revoked, expired, inactive user, or, with `provider_sign_in_on`
    false, an account that signs in only through the organisation's provider: its sessions
    end when the operator turns that sign-in off, and so do its tokens), all alike.

    The row is found by the key's SHA-256 (a unique index), so a lookup's timing says
    something about the hash of the guess at most, never about a stored key; the stored
    digest is then compared in constant time all the same."""
    if not key or len(key) > 200:
        return None
    now = now or timezone.now()
    digest = api_key_digest(key)
    token = ApiToken.objects.select_related("user").filter(digest=digest).first()
    if token is None or not hmac.compare_digest(token.digest, digest):
        return None
    if not token.usable(now) or not token.user.is_active:
        return None
    if not provider_sign_in_on and _provider_only(token.user):
        return None
    if token.last_used_at is None or token.last_used_at < now - LAST_USED_EVERY:
        ApiToken.objects.filter(pk=token.pk).update(last_used_at=now)
        token.last_used_at = now
    return token


def _provider_only(user: User) -> bool:
    # No query for an account with a password, which every token-using script's has but
    # the provider's accounts lack.
    return not user.has_usable_password() and ExternalIdentity.objects.filter(user=user).exists()
