"""What the trail records, and the context of each entry (project, kind, who, from where).

django-auditlog connects its receivers to every model registered here (`models_register`,
from AuditConfig.ready): a create, a change (with the diff of the fields) or a delete of one
of them writes an entry in the same transaction, so a change that rolls back leaves none.
Changes a worker makes to a background job (progress, status) are the system's, not a
person's: for the job models only the creation (who started it) and a deletion are recorded.

Who and from where come from the request being answered (`RequestContextMiddleware` keeps it
for the request's duration): its user, read when the entry is written (so an API token's user,
set by DRF after the middleware ran, counts), and its client address through
core/client_address.py (X-Forwarded-For only through the operator's trusted proxies). Outside
a request (a management command, a worker) both are empty: the server did it.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any

from auditlog.registry import auditlog
from auditlog.signals import pre_log
from django.db.models import Model
from django.http import HttpRequest

from annotation.models import Adjudication, GoldAnswer
from audit.models import AuditEntry, AuditKind
from content.models import Pair
from core.client_address import client_address
from exports.models import ExportJob
from imports.models import ImportJob
from judging.models import Connection, Judge, JudgeRun, PromptTemplate
from projects.models import ApiToken, Invitation, Membership, Project, Task
from webhooks.models import Destination, Subscription

_request: ContextVar[HttpRequest | None] = ContextVar("audit_request", default=None)


def _pair_project(instance: Any) -> int | None:
    pair = instance._state.fields_cache.get("pair")  # the services hold it: no query then
    if pair is not None:
        project_id: int = pair.project_id
        return project_id
    return Pair.objects.filter(pk=instance.pair_id).values_list("project_id", flat=True).first()


def _own_project(instance: Any) -> int | None:
    project_id: int | None = instance.project_id
    return project_id


def _no_project(instance: Any) -> int | None:
    return None


def _membership_repr(m: Membership) -> str:
    return f"{m.user.username} ({m.role})"


# model: (kind, its project's id, a short description, fields never recorded)
TRACKED: dict[
    type[Model], tuple[str, Callable[[Any], int | None], Callable[[Any], str], list[str]]
] = {
    Project: (AuditKind.PROJECT, lambda p: p.pk, lambda p: p.slug, []),
    Task: (AuditKind.TASK, _own_project, lambda t: t.slug, []),
    Membership: (AuditKind.MEMBER, _own_project, _membership_repr, []),
    # The link's token is a secret: its hash is left out of the diff too.
    Invitation: (
        AuditKind.INVITATION,
        _own_project,
        lambda i: i.email or i.note or f"#{i.pk}",
        ["token_hash"],
    ),
    Judge: (AuditKind.JUDGE, _own_project, lambda j: j.name, []),
    Connection: (AuditKind.CONNECTION, _no_project, lambda c: c.name, []),
    PromptTemplate: (AuditKind.TEMPLATE, _own_project, lambda t: f"{t.name} v{t.version}", []),
    JudgeRun: (AuditKind.RUN, _own_project, lambda r: f"#{r.pk}", []),
    GoldAnswer: (AuditKind.GOLD, _pair_project, lambda g: f"pair {g.pair_id}", []),
    Adjudication: (
        AuditKind.ADJUDICATION,
        _pair_project,
        lambda a: f"pair {a.pair_id}: {a.decision}",
        [],
    ),
    ImportJob: (AuditKind.IMPORT, _own_project, lambda j: j.file_name, []),
    ExportJob: (AuditKind.EXPORT, _own_project, lambda j: f"#{j.pk} {j.file_format}", []),
    # Made and revoked, never the key's digest; its last use is a script's, not a change.
    # A person's own credential, not the project's business: the operator's trail only (a
    # lead would otherwise learn when a member changed their password).
    ApiToken: (
        AuditKind.TOKEN,
        _no_project,
        lambda t: f"{t.name} ({t.user.username}, {t.prefix}…)",
        ["digest", "last_used_at"],
    ),
    # The operator's; a receiving URL often carries a secret of its own (a Slack-style
    # hook), so the trail names the destination and leaves its URL out.
    Destination: (AuditKind.WEBHOOK, _no_project, lambda d: d.name, ["url"]),
    Subscription: (
        AuditKind.WEBHOOK,
        _own_project,
        lambda s: f"{s.destination.name}: {', '.join(s.kinds)}",
        [],
    ),
}

# Their updates are a worker's progress; who started one (create) and deletes are kept.
CREATE_ONLY = (ImportJob, ExportJob, JudgeRun)


@contextmanager
def request_context(request: HttpRequest) -> Iterator[None]:
    token = _request.set(request)
    try:
        yield
    finally:
        _request.reset(token)


def who_and_where() -> dict[str, Any]:
    """The actor and client address of the request being answered (empty outside one)."""
    request = _request.get()
    if request is None:
        return {"actor": None, "actor_name": "", "remote_addr": None}
    user = getattr(request, "user", None)
    person = user if user is not None and user.is_authenticated else None
    return {
        "actor": person,
        "actor_name": person.get_username() if person is not None else "",
        "actor_email": (person.email or None) if person is not None else None,
        "remote_addr": client_address(request) or None,
    }


def entry_context(instance: Model) -> dict[str, Any]:
    kind, project_of, describe, _ = TRACKED[type(instance)]
    return {
        "kind": kind,
        "project_id": project_of(instance),
        "object_repr": describe(instance)[:1000],
        **who_and_where(),
    }


def _skip_job_progress(sender: object, instance: Model, action: int, **_: object) -> bool:
    return not (action == AuditEntry.Action.UPDATE and isinstance(instance, CREATE_ONLY))


def models_register() -> None:
    for model, (_kind, _project, _describe, excluded) in TRACKED.items():
        if not auditlog.contains(model):
            # The model's own columns (not the reverse relations auditlog would also list).
            fields = [f.name for f in model._meta.concrete_fields if f.name not in excluded]
            auditlog.register(model, include_fields=fields, m2m_fields=_m2m(model))
    pre_log.connect(_skip_job_progress, dispatch_uid="audit.skip_job_progress")


def _m2m(model: type[Model]) -> set[str]:
    # Which tasks a membership or an invitation covers; which projects may use a connection
    # or send to a webhook destination.
    if model in (Membership, Invitation):
        return {"tasks"}
    return {"projects"} if model in (Connection, Destination) else set()
