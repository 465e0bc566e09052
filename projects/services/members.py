"""Accounts, project membership and what it grants.

Rules: a username is taken whatever its case (sign-in is exact, so "Ann" and "ann" would
be two people no one can tell apart); passwords pass Django's validators
(AUTH_PASSWORD_VALIDATORS). A project keeps at least one lead: the last lead can be neither
demoted nor removed, which also stops a lead from locking everyone out of their project.
Removing a member (annotation/services/members.py) deletes the membership: every scope of the
access policy reads "has a membership", so access ends everywhere at once.

Concurrency: a change that can remove a lead locks the project's lead memberships first
(`SELECT … FOR UPDATE`; SQLite serialises writers anyway), then counts them.
"""

from collections.abc import Iterable

from django.contrib.auth import get_user_model
from django.contrib.auth.models import Permission, User
from django.contrib.auth.password_validation import validate_password
from django.core.exceptions import ValidationError
from django.core.validators import validate_email
from django.db import IntegrityError, transaction
from django.utils.translation import gettext

from core.errors import Invalid, NotFound, Refused
from projects.models import Membership, Project, Task


@transaction.atomic
def membership_set(user: User, project: Project, role: str) -> Membership:
    """Make `user` an annotator or lead of `project`. A lead works in Arbiter's own pages,
    scoped to the projects they lead; the Django admin is for operators only."""
    membership, _ = Membership.objects.update_or_create(
        user=user, project=project, defaults={"role": role}
    )
    return membership


def account_check(*, username: str, password: str, email: str = "") -> User:
    """An unsaved user with this name and password, or `Invalid` naming the fields: the
    name's characters, a name taken in any case, the password validators."""
    User = get_user_model()
    username = User.normalize_username(username or "")
    errors: dict[str, list[str]] = {}
    if not username:
        errors["username"] = [gettext("Enter a username.")]
    elif len(username) > 150:
        errors["username"] = [gettext("Use 150 characters or fewer.")]
    else:
        try:
            User.username_validator(username)
        except ValidationError as error:
            errors["username"] = list(error.messages)
        else:
            if User.objects.filter(username__iexact=username).exists():
                errors["username"] = [gettext("This username is taken; choose another.")]
    email = (email or "").strip()
    if email:
        try:
            validate_email(email)
        except ValidationError:
            errors["email"] = [gettext("Enter a valid email address, or none.")]
    user = User(username=username, email=email)
    if not password:
        errors["password"] = [gettext("Enter a password.")]
    else:
        try:
            validate_password(password, user=user)
        except ValidationError as error:
            errors["password"] = list(error.messages)
    if errors:
        first = next(iter(errors.values()))[0]
        raise Invalid(gettext("Account not created: %(error)s") % {"error": first}, fields=errors)
    user.set_password(password)
    return user


def account_create(
    *,
    username: str,
    password: str,
    email: str = "",
    may_create_projects: bool = False,
    operator: bool = False,
) -> User:
    """A new account (see `account_check`). `may_create_projects` grants Django's
    `projects.add_project` (a lead who starts their own projects); `operator` makes a
    superuser, who may do everything, the admin included."""
    user = account_check(username=username, password=password, email=email)
    user.is_superuser = user.is_staff = bool(operator)
    try:
        with transaction.atomic():
            user.save()
    except IntegrityError:  # the same name, created meanwhile
        raise Invalid(
            gettext("Account not created: this username is taken; choose another."),
            fields={"username": [gettext("This username is taken; choose another.")]},
        ) from None
    if may_create_projects and not operator:
        project_creator_grant(user)
    return user


def project_creator_grant(user: User) -> None:
    """Let the user create projects (Django's `projects.add_project`); idempotent."""
    user.user_permissions.add(
        Permission.objects.get(content_type__app_label="projects", codename="add_project")
    )


def tasks_of_project(project: Project, tasks: Iterable[Task] | None) -> list[Task]:
    """The tasks, when all are the project's; else `Invalid` on the field `tasks`."""
    chosen = list(tasks or [])
    if any(task.project_id != project.pk for task in chosen):
        raise Invalid(
            gettext("Choose tasks of this project."), fields={"tasks": [gettext("Unknown task.")]}
        )
    return chosen


def lead_kept_check(project: Project, leaving: Membership) -> None:
    """Refuse when `leaving` is the project's last lead (call inside the transaction)."""
    leads = list(
        Membership.objects.select_for_update()
        .filter(project=project, role=Membership.Role.LEAD)
        .values_list("pk", flat=True)
    )
    if leaving.pk in leads and len(leads) == 1:
        raise Refused(
            gettext("%(name)s is the last lead of %(project)s: make another member a lead first.")
            % {"name": leaving.user.username, "project": project.name}
        )


def _quota(value: int | None, field: str) -> int | None:
    if value is not None and value < 1:
        raise Invalid(
            gettext("A quota is at least 1 pair, or empty for no limit."),
            fields={field: [gettext("At least 1, or empty.")]},
        )
    return value


def membership_update(
    *,
    membership: Membership,
    role: str,
    tasks: Iterable[Task] | None,
    project_quota: int | None = None,
    task_quota: int | None = None,
) -> Membership:
    """Change a member's role, task limits (no tasks: all of the project's) and quotas (the
    most pairs they may take in the project and in each task; None: no limit)."""
    if role not in Membership.Role.values:
        raise Invalid(
            gettext("Choose annotator or lead."), fields={"role": [gettext("Unknown role.")]}
        )
    tasks = tasks_of_project(membership.project, tasks)
    membership.project_quota = _quota(project_quota, "project_quota")
    membership.task_quota = _quota(task_quota, "task_quota")
    with transaction.atomic():
        if role != Membership.Role.LEAD:
            lead_kept_check(membership.project, membership)
        membership.role = role
        membership.save(update_fields=["role", "project_quota", "task_quota"])
        membership.tasks.set(tasks)
    return membership


def membership_quotas_set(
    *, membership: Membership, project_quota: int | None, task_quota: int | None
) -> Membership:
    """Change only a member's quotas (`membership_update`'s rule: at least 1, None for no
    limit); their role and tasks are not written, so a change of those made meanwhile
    stays. The next claim reads the new quotas (annotation/services/quotas.py). `NotFound`
    when the member was removed meanwhile (their row is locked, then written)."""
    membership.project_quota = _quota(project_quota, "project_quota")
    membership.task_quota = _quota(task_quota, "task_quota")
    with transaction.atomic():
        still = Membership.objects.select_for_update().filter(pk=membership.pk)
        if still.values_list("pk", flat=True).first() is None:
            raise NotFound(gettext("No member with this id."))
        membership.save(update_fields=["project_quota", "task_quota"])
    return membership


def membership_add(
    *, project: Project, identifier: str, role: str, tasks: Iterable[Task] | None
) -> bool:
    """Make the account named by `identifier` (its exact username, or its e-mail when one
    account has it; either in any case) a member of `project` with `role` and `tasks`.
    Returns whether a membership was made; the caller must answer the same either way, so
    that adding is no way to learn which accounts exist. No account, a disabled one, an
    imported ratings' placeholder, an e-mail shared by several accounts and someone already
    a member (whose role stays as it is) all make none."""
    if role not in Membership.Role.values:
        raise Invalid(
            gettext("Choose annotator or lead."), fields={"role": [gettext("Unknown role.")]}
        )
    tasks = tasks_of_project(project, tasks)
    identifier = (identifier or "").strip()[:254]
    if not identifier:
        raise Invalid(
            gettext("Enter a username or an e-mail address."),
            fields={"identifier": [gettext("Enter a username or an e-mail address.")]},
        )
    people = get_user_model().objects.filter(is_active=True, placeholder__isnull=True)
    user = people.filter(username__iexact=identifier).first()
    if user is None and "@" in identifier:
        by_email = list(people.filter(email__iexact=identifier)[:2])
        user = by_email[0] if len(by_email) == 1 else None
    if user is None:
        return False
    with transaction.atomic():
        _membership, created = Membership.objects.get_or_create(
            user=user, project=project, defaults={"role": role}
        )
        if created:
            _membership.tasks.set(tasks)
    return created
