"""Invitations: one-time links that bring a person into a project.

Rules:
- The link carries a random token (`secrets.token_urlsafe(32)`, 256 bits); the database
  keeps only its SHA-256, so a copy of the database opens no project. The raw token is
  returned once, by `invitation_create`, for the lead to copy (or to mail).
- An invitation is open while it is not used, not revoked and not expired (1–30 days, 7 by
  default). Every other state answers the same `InvitationNotValid`, so a link's holder
  cannot tell a used link from a revoked or a made-up one.
- Accepting makes exactly one membership with the invitation's role and tasks: for a new
  account (name and password pass projects.services.members.account_check, and the name is
  not of the imported placeholders' kind: projects.models.placeholder) or for the
  signed-in user. A member of the project already keeps their membership and the link stays
  open (their lead changes roles on the members page).

Concurrency: `invitation_accept` locks the invitation row (`SELECT … FOR UPDATE`; on SQLite
writers are serialised by IMMEDIATE transactions) and checks that it is open under the lock,
then marks it used with a conditional update in the same transaction: two posts of one
link make one account, the second sees the link used.
"""

import logging
import secrets
import smtplib
from collections.abc import Iterable
from dataclasses import dataclass
from datetime import timedelta

from django.contrib.auth.models import User
from django.core.exceptions import ValidationError
from django.core.mail import BadHeaderError, send_mail
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils import timezone
from django.utils.translation import gettext, gettext_noop

from core.errors import Invalid, NotFound, Refused
from projects.models import Invitation, Membership, Project, Task
from projects.models.invitation import open_at, token_hash
from projects.models.placeholder import username_not_reserved
from projects.services.members import account_create, tasks_of_project

DEFAULT_DAYS = 7
MAX_DAYS = 30
NOT_VALID = gettext_noop("This invitation link is not valid any more.")  # translated when raised

logger = logging.getLogger(__name__)


class InvitationNotValid(NotFound):
    """Unknown, used, revoked or expired: one answer for all (the page is a 404)."""

    def __init__(self) -> None:
        super().__init__(gettext(NOT_VALID))


@dataclass(frozen=True)
class CreatedInvitation:
    invitation: Invitation
    token: str  # the raw token: show it once, never store it


def invitation_create(
    *,
    project: Project,
    created_by: User,
    role: str = Membership.Role.ANNOTATOR,
    tasks: Iterable[Task] = (),
    days: int = DEFAULT_DAYS,
    email: str = "",
    note: str = "",
) -> CreatedInvitation:
    """A new open invitation to `project` and its raw token (the caller checked that
    `created_by` leads the project)."""
    errors: dict[str, list[str]] = {}
    if role not in Membership.Role.values:
        errors["role"] = [gettext("Choose annotator or lead.")]
    if not isinstance(days, int) or not 1 <= days <= MAX_DAYS:
        errors["days"] = [gettext("Choose between 1 and %(days)s days.") % {"days": MAX_DAYS}]
    email = (email or "").strip()
    if email:
        try:
            validate_email(email)
        except ValidationError:
            errors["email"] = [gettext("Enter a valid email address, or leave it empty.")]
    note = (note or "").strip()
    if len(note) > 200:
        errors["note"] = [gettext("Use 200 characters or fewer.")]
    if errors:
        raise Invalid(next(iter(errors.values()))[0], fields=errors)
    tasks = tasks_of_project(project, tasks)
    token = secrets.token_urlsafe(32)
    with transaction.atomic():
        invitation = Invitation.objects.create(
            project=project,
            role=role,
            token_hash=token_hash(token),
            email=email,
            note=note,
            created_by=created_by,
            expires_at=timezone.now() + timedelta(days=days),
        )
        invitation.tasks.set(tasks)
    return CreatedInvitation(invitation, token)


def invitation_revoke(*, invitation: Invitation) -> None:
    """Close an open invitation; a used one stays as it is (its member is removed on the
    members page)."""
    with transaction.atomic():
        # Saved, not a queryset update: the audit trail records the change (audit/).
        open_one = (
            Invitation.objects.select_for_update()
            .filter(pk=invitation.pk, used_at__isnull=True, revoked_at__isnull=True)
            .first()
        )
        if open_one is None:
            raise Refused(gettext("This invitation was already used or revoked."))
        open_one.revoked_at = timezone.now()
        open_one.save(update_fields=["revoked_at"])


def _locked_open(token: str) -> Invitation:
    invitation = (
        Invitation.objects.filter(open_at(timezone.now()))
        .select_for_update(of=("self",))
        .select_related("project")
        .filter(token_hash=token_hash(token))
        .first()
    )
    if invitation is None:
        raise InvitationNotValid()
    return invitation


def _use(invitation: Invitation, user: User) -> Membership:
    now = timezone.now()
    used = Invitation.objects.filter(
        pk=invitation.pk, used_at__isnull=True, revoked_at__isnull=True
    ).update(used_at=now, used_by=user)
    if not used:  # belt and braces: the row lock already serialised us
        raise InvitationNotValid()
    try:
        with transaction.atomic():
            membership = Membership.objects.create(
                user=user, project=invitation.project, role=invitation.role
            )
    except IntegrityError:  # joined meanwhile through another link: the whole accept undoes
        raise Refused(
            gettext("You are already a member of %(project)s.")
            % {"project": invitation.project.name}
        ) from None
    membership.tasks.set(invitation.tasks.all())
    return membership


def invitation_accept(
    *, token: str, user: User | None = None, username: str = "", password: str = ""
) -> Membership:
    """Use the invitation: join the signed-in `user` to its project, or create the account
    `username`/`password` and join it. The new account gets no email address: the one the
    lead typed is unconfirmed, and a password reset sent there would hand the account to
    whoever reads it. Raises `InvitationNotValid` when the link is not open,
    `Invalid` (fields `username`, `password`) for a refused account, `Refused` when `user`
    is a member already."""
    with transaction.atomic():
        invitation = _locked_open(token)
        if user is not None:
            if Membership.objects.filter(user=user, project=invitation.project).exists():
                raise Refused(
                    gettext("You are already a member of %(project)s.")
                    % {"project": invitation.project.name}
                )
        else:
            try:
                username_not_reserved(username)
            except ValidationError as error:
                raise Invalid(
                    gettext("Account not created: %(error)s") % {"error": error.messages[0]},
                    fields={"username": list(error.messages)},
                ) from None
            user = account_create(username=username, password=password)
        return _use(invitation, user)


def invitation_mail(*, invitation: Invitation, link: str) -> bool:
    """Mail the link to the invitation's address; False when it could not be sent (the lead
    still has the link to copy). Call only when `mail_configured()` and there is an address."""
    project = " ".join(invitation.project.name.split())  # no line break in a header
    inviter = invitation.created_by.username if invitation.created_by else "A lead"
    body = (
        f"{inviter} invites you to the project {project} on Arbiter as "
        f"{invitation.get_role_display().lower()}.\n\n"
        f"Open this link to choose a username and password, or to join with your account:\n"
        f"{link}\n\n"
        f"The link works once and until {invitation.expires_at:%Y-%m-%d %H:%M} UTC.\n"
    )
    try:
        sent = send_mail(f"Invitation to {project}", body, None, [invitation.email])
    except (OSError, smtplib.SMTPException, BadHeaderError):
        logger.warning("invitation %s: the mail could not be sent", invitation.pk, exc_info=True)
        return False
    return sent == 1


def invitations_accept_for_email(*, user: User, email: str) -> list[Membership]:
    """Accept, for `user`, every open invitation addressed to `email` (any case): the caller
    vouches that the user owns the address (the organisation's provider said it verified
    it: projects/services/identities.py). Each invitation is locked and used as
    `invitation_accept` does; one to a project the user already belongs to stays open."""
    email = (email or "").strip()
    if not email:
        return []
    candidates = [
        pk
        for pk, address in Invitation.objects.filter(
            open_at(timezone.now()), email__iexact=email
        ).values_list("pk", "email")
        if _same_address(address, email)
    ]
    memberships = []
    for pk in candidates:
        with transaction.atomic():
            invitation = (
                Invitation.objects.filter(open_at(timezone.now()), pk=pk)
                .select_for_update(of=("self",))
                .select_related("project")
                .first()
            )
            if invitation is None:  # used or revoked meanwhile
                continue
            if Membership.objects.filter(user=user, project=invitation.project).exists():
                continue
            try:
                memberships.append(_use(invitation, user))
            except Refused:  # joined meanwhile through another link
                continue
    return memberships


def _same_address(invited: str, verified: str) -> bool:
    """ASCII letters in any case, everything else exactly: a database's case folding (and
    Python's) maps some other letters onto ASCII ones (the Kelvin sign onto k, the dotless ı
    onto I), so a look-alike address a provider verified must not take another's invitation."""
    invited, verified = invited.strip(), verified.strip()
    if invited.isascii() and verified.isascii():
        return invited.lower() == verified.lower()
    return invited == verified
