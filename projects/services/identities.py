"""Accounts of people who sign in through the organisation's OpenID provider (the protocol
is config/oidc.py's; this is what a verified sign-in does to Arbiter's accounts).

Rules:
- An account is found by the provider's `(issuer, sub)` (`ExternalIdentity`), never by an
  e-mail address: a provider may hand an address to someone else, and anyone can put any
  address into an unverified claim.
- A first sign-in creates an account with no project access: no membership, not an
  operator, no right to create projects. Its name comes from `preferred_username` (or the
  e-mail's local part), made unique; it has no usable password. Its e-mail is kept only
  when the provider says it verified it.
- No silent takeover: when the *verified* e-mail is already an account's (a local account,
  or another identity's), the first sign-in is refused (`IdentityRefused`) and nothing is
  created; the operator links the two on purpose (`manage.py oidc_link USERNAME SUBJECT`),
  or the person asks for a different address. The refusal does not say why (the operator's
  log does): its page reads like any refused first sign-in.
- An unverified e-mail claim is never compared with the accounts: anyone may type any address
  into it, and a refusal that came only when the address had an account would tell them which
  addresses have one. It is not kept either, so the new account cannot take the other's
  place: the sign-in goes on as if the claim were absent.
- Every sign-in accepts the open invitations addressed to a *verified* e-mail claim
  (`invitations_accept_for_email`): the lead's invitation is the grant of access.
- When the operator maps claim values to roles (ARBITER_OIDC_OPERATOR_VALUES,
  ARBITER_OIDC_LEAD_VALUES on the claim ARBITER_OIDC_ROLE_CLAIM), each sign-in sets the role
  from the claim, both ways: in a mapped group → operator (superuser) or may create
  projects; not any more → the role is removed. A mapping left empty changes nothing.

Concurrency: two first sign-ins of one person at once meet on the unique `(issuer, sub)`
constraint; the loser's transaction undoes its account and it answers "try again".
"""

import logging
import re
import secrets
from collections.abc import Iterable, Mapping
from typing import Any

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission, User
from django.core.exceptions import ValidationError
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext

from core.errors import Refused
from projects.models import ExternalIdentity, PlaceholderAccount
from projects.models.placeholder import username_not_reserved
from projects.services.api_tokens import api_tokens_revoke_all
from projects.services.invitations import invitations_accept_for_email
from projects.services.members import project_creator_grant

logger = logging.getLogger(__name__)


class IdentityRefused(Refused):
    """The provider vouched for the person, but Arbiter will not sign them in (an address
    already an account's, an account turned off). 403, not Refused's 409: it is about who
    they are, not about the state of something they asked to change."""

    status = 403


EMAIL_LENGTH = 254


def email_verified(claims: Mapping[str, Any]) -> str:
    """The claimed e-mail if the provider says it verified it (true, or "true" as some
    providers send it), else ""."""
    email = claims.get("email")
    verified = claims.get("email_verified")
    if not isinstance(email, str) or not email.strip() or len(email.strip()) > EMAIL_LENGTH:
        return ""  # longer than an account's e-mail column holds (RFC 5321): not an address
    if verified is True or (isinstance(verified, str) and verified.lower() == "true"):
        return email.strip()
    return ""


def claim_values(claims: Mapping[str, Any], name: str) -> set[str]:
    """A claim as a set of strings (a list of groups, or one string)."""
    value = claims.get(name)
    if isinstance(value, str):
        return {value}
    if isinstance(value, list | tuple):
        return {item for item in value if isinstance(item, str)}
    return set()


def _username_free(name: str) -> bool:
    User = get_user_model()
    try:
        username_not_reserved(name)
    except ValidationError:
        return False
    return not User.objects.filter(username__iexact=name).exists()


def _username_for(claims: Mapping[str, Any]) -> str:
    raw = [claims.get("preferred_username"), str(claims.get("email") or "").split("@")[0]]
    for candidate in raw:
        # Django's username characters only; a name a provider allows may not be one.
        base = re.sub(r"[^\w.@+-]", "", str(candidate or ""), flags=re.ASCII)[:140]
        if not base:
            continue
        for number in range(1, 21):
            name = base if number == 1 else f"{base}-{number}"
            if _username_free(name):
                return name
    return f"user-{secrets.token_hex(4)}"


def _email_taken(email: str) -> bool:
    return bool(email) and get_user_model().objects.filter(email__iexact=email).exists()


def _roles_apply(
    user: User,
    claims: Mapping[str, Any],
    *,
    claim: str,
    operator: Iterable[str],
    lead: Iterable[str],
) -> None:
    values = claim_values(claims, claim)
    operator, lead = set(operator), set(lead)
    lost_a_role = False
    if operator:
        is_operator = bool(values & operator)
        if user.is_superuser != is_operator or user.is_staff != is_operator:
            lost_a_role = user.is_superuser and not is_operator
            user.is_superuser = user.is_staff = is_operator
            user.save(update_fields=["is_superuser", "is_staff"])
    if lead:
        if values & lead:
            project_creator_grant(user)
        else:
            creating = Permission.objects.get(
                content_type__app_label="projects", codename="add_project"
            )
            if user.user_permissions.filter(pk=creating.pk).exists():
                user.user_permissions.remove(creating)
                lost_a_role = True
    if lost_a_role:
        # A token made with the role would keep its reach until it expires (up to a year):
        # the person makes new ones with what they hold now.
        api_tokens_revoke_all(user_id=user.pk)


def identity_sign_in(
    *,
    issuer: str,
    claims: Mapping[str, Any],
    role_claim: str = "groups",
    operator_values: Iterable[str] = (),
    lead_values: Iterable[str] = (),
) -> User:
    """The account for a verified sign-in (`claims`: the id token's, with the userinfo's),
    created on the first; `IdentityRefused` when it may not sign in. See the module's rules."""
    subject = claims.get("sub")
    if not isinstance(subject, str) or not subject or len(subject) > 255 or len(issuer) > 255:
        raise IdentityRefused(gettext("The provider did not say who you are."))
    verified = email_verified(claims)
    try:
        with transaction.atomic():
            identity = (
                ExternalIdentity.objects.select_for_update()
                .select_related("user")
                .filter(issuer=issuer, subject=subject)
                .first()
            )
            if identity is None:
                if _email_taken(verified):
                    # For the operator, who may link them on purpose (manage.py oidc_link).
                    logger.warning(
                        "first sign-in of %s (%s) refused: its verified e-mail is an "
                        "account's already",
                        subject,
                        issuer,
                    )
                    raise IdentityRefused(
                        gettext(
                            "Arbiter did not open an account for this sign-in. Ask the "
                            "operator of this server to give you access."
                        )
                    )
                user = get_user_model().objects.create_user(
                    _username_for(claims), email=verified
                )  # no password: an unusable one
                identity = ExternalIdentity.objects.create(
                    issuer=issuer, subject=subject, user=user
                )
            user = identity.user
            if not user.is_active:
                raise IdentityRefused(gettext("This account is turned off."))
            identity.last_sign_in_at = timezone.now()
            identity.save(update_fields=["last_sign_in_at"])
            _roles_apply(user, claims, claim=role_claim, operator=operator_values, lead=lead_values)
    except IntegrityError:  # the same person's first sign-in in another tab, meanwhile
        raise Refused(gettext("Your account was being created meanwhile; try again.")) from None
    if verified:
        invitations_accept_for_email(user=user, email=verified)
    return user


def identity_link(*, user: User, issuer: str, subject: str) -> ExternalIdentity:
    """Let `user` sign in as the provider's `subject` (the operator's `oidc_link`): for an
    existing account whose e-mail a first sign-in was refused on."""
    if not issuer or not subject:
        raise Refused(gettext("An issuer and a subject are needed."))
    if PlaceholderAccount.objects.filter(pk=user.pk).exists():
        raise Refused(gettext("An import's placeholder account signs in nowhere."))
    try:
        with transaction.atomic():
            return ExternalIdentity.objects.create(issuer=issuer, subject=subject, user=user)
    except IntegrityError:
        raise Refused(gettext("This identity is linked to an account already.")) from None
