"""Creating, updating and deleting judges and the operator's connections.

Who may do what is decided by the callers (pages, API, commands); the rules of a valid judge
live here: an API judge calls through a connection allowed for its project, sampling takes
known numeric parameters only, and templates name a built-in or one of the project's own.
"""

import math
from urllib.parse import urlsplit

from django.core.exceptions import ValidationError
from django.db import transaction
from django.utils.translation import gettext

from core.errors import Invalid, Refused
from judging.backends import ConfigurationError, api_key
from judging.models import (
    API_BACKENDS,
    SAMPLING_RANGES,
    Connection,
    Judge,
    JudgeRun,
    PromptTemplate,
    TaskEnsemble,
    Verdict,
)
from judging.prompts import BUILT_IN
from judging.sampling import sampling_problem
from judging.selectors import connection_allows
from projects.models import Project, Task

EDITABLE_FIELDS = (
    "backend",
    "connection",
    "model",
    "sampling",
    "templates",
    "concurrency",
    "requests_per_minute",
    "timeout_seconds",
    "price_input_per_mtok",
    "price_output_per_mtok",
)
_INTEGER_SAMPLING = {"top_k", "max_tokens", "max_completion_tokens", "seed"}


def _invalid(field: str, message: str) -> Invalid:
    return _invalid_fields({field: message})


def _invalid_fields(errors: dict[str, str]) -> Invalid:
    """An input error with one message per field (the forms show each beside its field)."""
    return Invalid("; ".join(errors.values()), {field: [m] for field, m in errors.items()})


def _full_clean(instance) -> None:
    """The model's own field checks, answered as the domain's input error like the rest."""
    try:
        instance.full_clean()
    except ValidationError as invalid:
        raise Invalid("; ".join(invalid.messages), invalid.message_dict) from None


def sampling_check(sampling) -> dict:
    if sampling in (None, ""):
        return {}
    if not isinstance(sampling, dict):
        raise _invalid("sampling", gettext("a JSON object"))
    for key, value in sampling.items():
        if key not in SAMPLING_RANGES:
            known = ", ".join(SAMPLING_RANGES)
            raise _invalid(
                "sampling",
                gettext("unknown parameter %(key)s (known: %(known)s)")
                % {"key": repr(key), "known": known},
            )
        low, high = SAMPLING_RANGES[key]
        integer = key in _INTEGER_SAMPLING
        if (
            isinstance(value, bool)
            or not isinstance(value, int | float)
            or (integer and not isinstance(value, int))
            or not math.isfinite(value)
            or not low <= value <= high
        ):
            values = {"key": key, "low": low, "high": high}
            if integer:
                message = gettext("%(key)s must be an integer from %(low)s to %(high)s")
            else:
                message = gettext("%(key)s must be a number from %(low)s to %(high)s")
            raise _invalid("sampling", message % values)
    return sampling


def templates_check(templates, project: Project | None) -> dict:
    """{task kind: template name}; a name must be a built-in or one of the project's."""
    if templates in (None, ""):
        return {}
    if not isinstance(templates, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in templates.items()
    ):
        raise _invalid("templates", gettext("a JSON object {task kind: template name}"))
    kinds = sorted(set(templates) - set(Task.Kind.values))
    if kinds:  # a misspelt kind would be ignored by every run
        known = ", ".join(Task.Kind.values)
        raise _invalid(
            "templates",
            gettext("no task kind %(kinds)s (kinds: %(known)s)")
            % {"kinds": ", ".join(kinds), "known": known},
        )
    own = set()
    if project is not None:
        own = set(
            PromptTemplate.objects.filter(project=project, name__in=templates.values())
            .values_list("name", flat=True)
            .distinct()
        )
    unknown = sorted(set(templates.values()) - own - set(BUILT_IN))
    if unknown:
        raise _invalid(
            "templates",
            gettext("no template named %(names)s") % {"names": ", ".join(unknown)},
        )
    return templates


def judge_get_or_create_external(name: str, project: Project) -> Judge:
    """The judge an imported prediction file is for: the project's judge of that name, else
    a new judge of the project known only by its predictions. Never the operator's judge:
    a lead's file would become its results, which its operator could then not delete."""
    judge = Judge.objects.filter(name=name, project=project).first()
    if judge is None:
        if Judge.objects.filter(name=name, project__isnull=True).exists():
            raise _invalid(
                "name",
                gettext("imports go under a judge of this project; this name is the operator's"),
            )
        judge = judge_save(name, project=project, backend=Judge.Backend.EXTERNAL)[0]
    return judge


def _name_clash(name: str, project: Project | None) -> bool:
    """Within a project, a judge's name is unique across its own and the operator's judges
    (pages, commands and reports name judges)."""
    if project is None:
        return Judge.objects.filter(name=name, project__isnull=False).exists()
    return Judge.objects.filter(name=name, project__isnull=True).exists()


def judge_ready_check(judge: Judge) -> None:
    """What can be known about a judge's calls without making one: an OpenAI or Anthropic
    judge names a model, and the key variable its connection names is set on this server
    (the message never names the variable: it is the operator's). The connection's scope and
    the template names are checked by judge_save itself. Raises Invalid."""
    if judge.backend not in API_BACKENDS:
        return
    errors = {}
    if not judge.model:
        errors["model"] = gettext("an OpenAI or Anthropic judge needs a model name")
    try:
        api_key(judge)
    except ConfigurationError as missing:
        errors["connection"] = str(missing)
    if errors:
        raise _invalid_fields(errors)


def judge_save(
    name: str, *, project: Project | None, check_ready: bool = False, **changes
) -> tuple[Judge, bool]:
    """Create the project's judge (no project: the operator's) or update the given fields.
    `check_ready`: also refuse a judge that could not make a call now (judge_ready_check;
    the lead's form). Raises Invalid with field messages."""
    unknown = set(changes) - set(EDITABLE_FIELDS)
    if unknown:
        raise _invalid_fields({field: gettext("not a judge setting") for field in sorted(unknown)})
    if "sampling" in changes:
        changes["sampling"] = sampling_check(changes["sampling"])
    if "templates" in changes:
        changes["templates"] = templates_check(changes["templates"], project)
    with transaction.atomic():
        judge = Judge.objects.select_for_update().filter(name=name, project=project).first()
        created = judge is None
        if judge is None:
            if _name_clash(name, project):
                raise _invalid(
                    "name",
                    gettext("a judge named %(name)s exists already") % {"name": repr(name)},
                )
            judge = Judge(name=name, project=project)
        for field, value in changes.items():
            setattr(judge, field, value)
        _connection_check(judge)
        if problem := sampling_problem(judge.backend, judge.model, judge.sampling or {}):
            raise _invalid("sampling", problem)
        if check_ready:
            judge_ready_check(judge)
        _full_clean(judge)
        judge.save()
    return judge, created


def _connection_check(judge: Judge) -> None:
    if judge.backend not in API_BACKENDS:
        judge.connection = None  # baselines and imported judges never call out
        return
    connection = judge.connection
    if connection is None:
        raise _invalid("connection", gettext("an API judge needs a connection"))
    if connection.backend != judge.backend:
        raise _invalid(
            "connection",
            gettext("connection %(name)s is for %(backend)s")
            % {"name": connection.name, "backend": connection.backend},
        )
    if judge.project is not None and not connection_allows(connection, judge.project):
        # The same words as for a connection that does not exist: names of connections
        # allowed to other projects are not a lead's to learn.
        raise _invalid("connection", gettext("no such connection for this project"))


class JudgeInUse(Refused):
    """The judge has results or a role; deleting it would take them with it."""


def judge_delete(judge: Judge) -> None:
    """Delete a judge that has no runs, no verdicts and sits in no ensemble: results must
    never vanish with a judge."""
    with transaction.atomic():
        locked = Judge.objects.select_for_update().filter(pk=judge.pk).first()
        if locked is None:
            return  # deleted meanwhile: a repeated delete
        if (
            JudgeRun.objects.filter(judge=locked).exists()
            or Verdict.objects.filter(judge=locked).exists()
            or TaskEnsemble.objects.filter(judges=locked).exists()
        ):
            raise JudgeInUse(
                gettext("judge %(name)s has runs, verdicts or an ensemble role; it stays")
                % {"name": repr(locked.name)}
            )
        locked.delete()


def base_url_check(url: str) -> str:
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.hostname:
        raise _invalid("base_url", "an http:// or https:// URL")
    if parts.username or parts.password or "?" in url or "#" in url:
        # The path is appended to, so a query or fragment would swallow it.
        raise _invalid("base_url", "no credentials, query or fragment in the URL")
    return url.rstrip("/")


# Arbiter's own secrets: a connection never sends them to a model provider, even if an
# operator types one of these names by mistake.
SERVER_SECRETS = {
    "SECRET_KEY", "DATABASE_URL", "REDIS_URL", "EMAIL_HOST_PASSWORD", "CI_DATABASE_URL",
    "CI_REDIS_URL",
}  # fmt: skip


def api_key_env_check(name: str) -> str:
    if name and not (name.replace("_", "").isalnum() and name.isascii() and not name[0].isdigit()):
        raise _invalid(
            "api_key_env", "the NAME of an environment variable (letters, digits, _), never a key"
        )
    if name.upper() in SERVER_SECRETS:
        raise _invalid("api_key_env", f"{name} is Arbiter's own secret, not an API key")
    return name


def connection_save(
    name: str,
    *,
    backend: str | None = None,
    base_url: str | None = None,
    api_key_env: str | None = None,
    all_projects: bool | None = None,
    projects: list[Project] | None = None,
) -> tuple[Connection, bool]:
    """Create or update an operator's connection (only operators call this)."""
    with transaction.atomic():
        connection = Connection.objects.select_for_update().filter(name=name).first()
        created = connection is None
        if connection is None:
            connection = Connection(name=name)
        if backend is not None:
            connection.backend = backend
        if base_url is not None:
            connection.base_url = base_url_check(base_url)
        if api_key_env is not None:
            connection.api_key_env = api_key_env_check(api_key_env)
        if all_projects is not None:
            connection.all_projects = all_projects
        if (
            connection.pk
            and backend is not None
            and connection.judges.exclude(backend=backend).exists()
        ):
            raise _invalid("backend", "judges of another backend use this connection")
        _full_clean(connection)
        connection.save()
        if projects is not None:
            connection.projects.set(projects)
    return connection, created
