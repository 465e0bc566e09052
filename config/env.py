"""Strict readers for settings that come from environment variables, and the declaration of
every variable an operator may set.

A typo in the environment must stop the process at start-up with a message that names the
variable, never silently fall back to a default. `VARIABLES` is the one description of each
variable: `python -m config.env --markdown > docs/environment.md` writes the operators' table
from it, and tests check that every variable the settings read is declared here, that a
declared default is the one the settings use, and that the committed page is the generated one.
"""

import argparse
import os
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, unquote, urlsplit


class EnvError(ValueError):
    pass


@dataclass(frozen=True)
class Variable:
    """One row of the operators' table: the names it documents together, the default as the
    docs say it, and what it means (both in Markdown)."""

    names: tuple[str, ...]
    default: str
    meaning: str
    section: str = "General"


SECTION_INTROS = {
    "General": (
        "All settings come from environment variables, parsed strictly (a malformed value stops "
        "the process with a message naming the variable)."
    ),
    "Object storage": "What each one does: [Object storage](operators.md#object-storage).",
    "Sign-in through your organisation (OIDC)": "How sign-in works: [the guide](sign-in.md).",
}

VARIABLES: tuple[Variable, ...] = (
    Variable(
        ("DATABASE_URL",),
        default="`sqlite:///./var/arbiter.sqlite3`",
        meaning=(
            "`sqlite:///relative/path`, `sqlite:////absolute/path` or "
            "`postgres://user:pass@host:port/name?sslmode=...`"
        ),
    ),
    Variable(
        ("REDIS_URL",),
        default="unset",
        meaning=(
            "Redis for the Celery broker and the cache; unset = Celery in-process, local-memory "
            "cache"
        ),
    ),
    Variable(
        ("MEDIA_ROOT",),
        default="`./var/media`",
        meaning="where images are stored, by SHA-256, when `S3_BUCKET` is unset",
    ),
    Variable(
        ("SECRET_KEY",),
        default="`./var/secret_key`, written by `manage.py init_embedded` (`make demo` runs it)",
        meaning=(
            "required in production; without either, a single process (`runserver`, one "
            "gunicorn worker) makes a throwaway key and `check` warns (`arbiter.W001`), while "
            "gunicorn with several workers and every Celery worker refuse to start (they would "
            "not share it)"
        ),
    ),
    Variable(
        ("DEBUG",),
        default="`false`",
        meaning="`true/false`, `1/0`, `yes/no`, `on/off`",
    ),
    Variable(
        ("ALLOWED_HOSTS",),
        default="`127.0.0.1,localhost`",
        meaning="comma-separated; required in production",
    ),
    Variable(
        ("CSRF_TRUSTED_ORIGINS",),
        default="empty",
        meaning="comma-separated origins, e.g. `https://arbiter.example.org`",
    ),
    Variable(
        ("ARBITER_VAR_DIR",),
        default="`./var`",
        meaning="folder of the embedded database, secret key and media",
    ),
    Variable(
        (
            "EMAIL_HOST",
            "EMAIL_PORT",
            "EMAIL_HOST_USER",
            "EMAIL_HOST_PASSWORD",
            "EMAIL_USE_TLS",
            "DEFAULT_FROM_EMAIL",
        ),
        default="unset: no mail",
        meaning=(
            "SMTP for invitation links, password resets and notification e-mails (port 587 and "
            "TLS by default)"
        ),
    ),
    Variable(
        ("ARBITER_BASE_URL",),
        default="`http://127.0.0.1:8000`",
        meaning=(
            "the address people open Arbiter at, for the links in notification e-mails (a "
            "worker sends them, with no request to read the host from); set it on every "
            "deployment that sends mail, e.g. `https://arbiter.example.org`"
        ),
    ),
    Variable(
        ("ARBITER_IMAGE_FORMATS",),
        default="`JPEG,PNG,WEBP,GIF`",
        meaning="image formats accepted on import",
    ),
    Variable(
        ("ARBITER_MAX_IMAGE_PIXELS",),
        default="`64000000`",
        meaning=(
            "decompression-bomb limit, summed over an animation's frames (frames × canvas, read "
            "from the headers before decoding): larger images are rejected"
        ),
    ),
    Variable(
        ("ARBITER_MAX_IMAGE_FRAMES",),
        default="`100`",
        meaning="most frames of an animated GIF, APNG or WebP; more are rejected",
    ),
    Variable(
        ("ARBITER_MAX_IMAGE_BYTES",),
        default="`52428800`",
        meaning="largest image file accepted",
    ),
    Variable(
        (
            "ARBITER_UPLOAD_MAX_BYTES",
            "ARBITER_UPLOAD_MAX_UNPACKED_BYTES",
            "ARBITER_UPLOAD_MAX_MEMBERS",
            "ARBITER_UPLOAD_MAX_RATIO",
        ),
        default="1 GiB, 4 GiB, `100000`, `200`",
        meaning=(
            "a pair upload (a data file or a zip) and its archive's members together, their "
            "number, and the compression ratio allowed"
        ),
    ),
    Variable(
        ("ARBITER_VERDICT_FILE_MAX_BYTES",),
        default="`268435456` (256 MiB)",
        meaning=(
            "largest prediction or score file (`/api/verdicts/import/`, `import_verdicts`), "
            "refused unread"
        ),
    ),
    Variable(
        ("ARBITER_IMPORT_MAX_RECORD_BYTES",),
        default="`16777216` (16 MiB)",
        meaning=(
            "largest record of a JSON or JSONL import (a line, a pair); parsing multiplies a "
            "record ~25 times, so this bounds an import's memory"
        ),
    ),
    Variable(
        ("ARBITER_VERDICT_MAX_RECORD_BYTES",),
        default="`2097152` (2 MiB)",
        meaning=(
            "largest record of a prediction or score file (one pair's entry, one row of "
            "scores), measured before it is parsed: a larger one is refused (400 through the "
            "API, naming this setting) after reading about twice this"
        ),
    ),
    Variable(
        ("ARBITER_MAX_TEXT_CHARS",),
        default="`200000`",
        meaning=(
            "longest text (a prompt or response text part, a rationale, a note) an import "
            "accepts; a longer one refuses the import naming the record"
        ),
    ),
    Variable(
        ("ARBITER_LOGIN_FAILURES_PER_ACCOUNT",),
        default="`10`",
        meaning=(
            "failed sign-ins allowed per username within a window; the login page, the admin "
            'and `POST /api/auth/token/` share the count (then "Too many failed sign-ins", the '
            "same for unknown names)"
        ),
    ),
    Variable(
        ("ARBITER_LOGIN_FAILURES_PER_ADDRESS",),
        default="`50`",
        meaning="failed sign-ins allowed per client address within a window",
    ),
    Variable(
        ("ARBITER_LOGIN_WINDOW_SECONDS",),
        default="`900`",
        meaning="the window of both login limits",
    ),
    Variable(
        ("ARBITER_TOKEN_LOGINS_PER_MINUTE",),
        default="`20`",
        meaning=(
            "`POST /api/auth/token/` attempts per client address and minute (then 429 with "
            "`Retry-After`)"
        ),
    ),
    Variable(
        ("ARBITER_API_TOKEN_DAYS",),
        default="`30`",
        meaning=(
            "lifetime of a new API token by default (the account page's, `POST "
            "/api/auth/token/`'s, `api_token_create`'s)"
        ),
    ),
    Variable(
        ("ARBITER_API_TOKEN_MAX_DAYS",),
        default="`365`",
        meaning=(
            "longest lifetime an API token may be given (at least `ARBITER_API_TOKEN_DAYS`, "
            "else the server refuses to start)"
        ),
    ),
    Variable(
        ("ARBITER_API_TOKENS_PER_USER",),
        default="`50`",
        meaning="usable (unrevoked, unexpired) API tokens one account may hold",
    ),
    Variable(
        ("ARBITER_TRUSTED_PROXIES",),
        default="`0`",
        meaning=(
            "proxies in front of the app whose `X-Forwarded-For` entry is trusted for the "
            "client address (0: `REMOTE_ADDR`; docker-compose sets 1 on the app behind its own "
            "Caddy proxy)"
        ),
    ),
    Variable(
        ("ARBITER_BATCH_POLL_SECONDS",),
        default="`30`",
        meaning=(
            "how often the scheduled job (Celery beat, or the embedded web process) asks the "
            "providers for the answers of batch runs"
        ),
    ),
    Variable(
        ("ARBITER_FIGURES_REFRESH_SECONDS",),
        default="`60`",
        meaning=(
            "how often the scheduled job (Celery beat, or the embedded web process) refreshes "
            "the precomputed dashboard figures whose data changed"
        ),
    ),
    Variable(
        ("ARBITER_OUTBOX_SWEEP_SECONDS",),
        default="`30`",
        meaning=(
            "how often the scheduled job (Celery beat, or the embedded web process) sends the "
            "jobs accepted while the broker was unreachable and the due webhook retries"
        ),
    ),
    Variable(
        ("ARBITER_WEBHOOK_RETRY_SECONDS",),
        default="`60,300,1800,7200`",
        meaning=(
            "seconds before each retry of a failed webhook delivery (one attempt more than "
            "there are entries)"
        ),
    ),
    Variable(
        ("ARBITER_WEBHOOK_TIMEOUT_SECONDS",),
        default="`5`",
        meaning="each webhook attempt's timeout",
    ),
    Variable(
        ("ARBITER_ALLOW_PRIVATE_ADDRESSES",),
        default="`false`",
        meaning=(
            "let judges' calls, webhook deliveries and the calls to the sign-in provider (OIDC "
            "discovery, token, JWKS, userinfo) reach private, loopback or reserved addresses (a "
            "model, receiver or provider inside the organisation); refused otherwise "
            "(SECURITY.md)"
        ),
    ),
    Variable(
        ("ARBITER_FIGURES_INLINE_MS",),
        default="`500`",
        meaning=(
            "a dashboard page whose figures took longer to compute shows its last figures after "
            "a change (marked) while they are refreshed in the background; quicker ones are "
            "recomputed in the request"
        ),
    ),
    Variable(
        ("CELERY_TASK_TIME_LIMIT",),
        default="`1800`",
        meaning="hard limit of a task (s)",
    ),
    Variable(
        ("CELERY_VISIBILITY_TIMEOUT",),
        default="twice the time limit",
        meaning="seconds after which Redis re-delivers a task whose worker died",
    ),
    Variable(
        ("TIME_ZONE",),
        default="`UTC`",
        meaning="the time zone dates are shown and exported in",
    ),
    Variable(
        ("STATIC_ROOT",),
        default="`./var/staticfiles`",
        meaning=(
            "where `collectstatic` gathers the stylesheets and scripts (the image serves them "
            "with WhiteNoise)"
        ),
    ),
    Variable(
        ("LOG_LEVEL",),
        default="`WARNING`",
        meaning="the root logger's level (`INFO` adds each webhook delivery and judge run)",
    ),
    Variable(
        ("ARBITER_SERVER_TIMING",),
        default="`false`",
        meaning=(
            "adds `Server-Timing: app;dur=MS` to every answer (the time inside Django; the "
            "benches read it)"
        ),
    ),
    Variable(
        ("SECURE_SSL_REDIRECT",),
        default="`true`",
        meaning=(
            "with `config.production`: redirect HTTP to HTTPS (except `/healthz`, `/readyz`, "
            "`/metrics`); `false` when a proxy in front already does"
        ),
    ),
    Variable(
        ("SECURE_HSTS_SECONDS",),
        default="`31536000`",
        meaning=(
            "with `config.production`: how long browsers keep to HTTPS (HSTS, subdomains and "
            "preload included); `0` turns HSTS off"
        ),
    ),
    Variable(
        ("DJANGO_SETTINGS_MODULE",),
        default="`config.settings`",
        meaning=(
            "`config.production` for a deployment: HTTPS redirect (except `/healthz`), HSTS, "
            "secure cookies; `manage.py check --deploy` is clean there. It **refuses to load** "
            "(web, workers and commands alike) with a `SECRET_KEY` shorter than 50 characters "
            "or with fewer than 5 distinct characters, or `*` in `ALLOWED_HOSTS`"
        ),
    ),
    Variable(
        ("S3_BUCKET",),
        default="unset: local disk",
        meaning=(
            "the bucket; create it beforehand, private (Arbiter never makes one, nor makes "
            "anything public)"
        ),
        section="Object storage",
    ),
    Variable(
        ("S3_ENDPOINT_URL",),
        default="empty: AWS",
        meaning=(
            "the store's address for anything but AWS, e.g. `http://minio:9000` (path-style "
            "addressing is then used)"
        ),
        section="Object storage",
    ),
    Variable(
        ("S3_REGION",),
        default="`us-east-1`",
        meaning="the bucket's region",
        section="Object storage",
    ),
    Variable(
        (
            "S3_ACCESS_KEY_ID",
            "S3_SECRET_ACCESS_KEY",
        ),
        default="unset: boto3's own chain (instance role, `~/.aws`)",
        meaning="the keys; both or neither",
        section="Object storage",
    ),
    Variable(
        ("S3_PREFIX",),
        default="empty",
        meaning="a key prefix, to share a bucket (e.g. `arbiter/`); `restore` wants it empty",
        section="Object storage",
    ),
    Variable(
        ("ARBITER_OIDC_ISSUER",),
        default="unset: off",
        meaning=(
            "the provider's issuer, exactly as its id tokens say it (`iss`), e.g. "
            "`https://id.lab.example/realms/lab`; a token naming any other issuer is refused"
        ),
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_NAME",),
        default='empty ("Sign in through your organisation")',
        meaning='the button\'s name: "Sign in with Lab ID"',
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        (
            "ARBITER_OIDC_CLIENT_ID",
            "ARBITER_OIDC_CLIENT_SECRET",
        ),
        default="—",
        meaning="the client the provider registered for Arbiter (both required with the issuer)",
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_SIGN_ALGO",),
        default="`RS256`",
        meaning=(
            "the only algorithm an id token may be signed with (RS/ES/HS 256–512; never `none`; "
            "not PS, which the library would check with the client secret); RS/ES keys come "
            "from the provider's JWKS"
        ),
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_SCOPES",),
        default="`openid email profile`",
        meaning="add the scope that carries your groups claim (often `groups`) when you map groups",
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        (
            "ARBITER_OIDC_AUTHORIZATION_ENDPOINT",
            "ARBITER_OIDC_TOKEN_ENDPOINT",
            "ARBITER_OIDC_JWKS_ENDPOINT",
            "ARBITER_OIDC_USERINFO_ENDPOINT",
        ),
        default="unset: discovery",
        meaning=(
            "the three first together (userinfo optional), or none: they are then read from "
            "`<issuer>/.well-known/openid-configuration`, whose `issuer` must be the configured "
            "one (kept an hour per process)"
        ),
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_TIMEOUT_SECONDS",),
        default="`10`",
        meaning="each call to the provider",
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_ROLE_CLAIM",),
        default="`groups`",
        meaning="the claim whose values map to roles",
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_OPERATOR_VALUES",),
        default="empty: no mapping",
        meaning="comma-separated values of that claim that make an **operator** (superuser)",
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_OIDC_LEAD_VALUES",),
        default="empty: no mapping",
        meaning=(
            "values that make a **lead who may create projects** (`projects.add_project`, as "
            "`user_add --lead`)"
        ),
        section="Sign-in through your organisation (OIDC)",
    ),
    Variable(
        ("ARBITER_PASSWORD_SIGN_IN",),
        default="`true`",
        meaning=(
            "`false` turns local passwords off (only with an issuer set, or Arbiter refuses to "
            "start)"
        ),
        section="Sign-in through your organisation (OIDC)",
    ),
)


def declared_names() -> set[str]:
    return {name for variable in VARIABLES for name in variable.names}


def markdown() -> str:
    """docs/environment.md: one table per section, in the order of VARIABLES."""
    lines = [
        "# Environment variables",
        "",
        "<!-- Generated from config/env.py by `python -m config.env --markdown`: edit the",
        "declarations there, then write this file again (a test compares the two). -->",
    ]
    for section, intro in SECTION_INTROS.items():
        lines += ["", f"## {section}", "", intro, ""]
        lines += ["| variable | default | meaning |", "|---|---|---|"]
        for variable in VARIABLES:
            if variable.section == section:
                names = ", ".join(f"`{name}`" for name in variable.names)
                lines.append(f"| {names} | {variable.default} | {variable.meaning} |")
    return "\n".join(lines) + "\n"


# The default each variable was read with, for the test that the declarations say the same.
_DEFAULTS_READ: dict[str, object] = {}


def defaults_read() -> dict[str, object]:
    return dict(_DEFAULTS_READ)


_TRUE = {"1", "true", "yes", "on"}
_FALSE = {"0", "false", "no", "off", ""}


def env_str(name: str, default: str = "") -> str:
    _DEFAULTS_READ[name] = default
    return os.environ.get(name, default).strip()


def env_bool(name: str, default: bool = False) -> bool:
    _DEFAULTS_READ[name] = default
    raw = os.environ.get(name)
    if raw is None:
        return default
    value = raw.strip().lower()
    if value in _TRUE:
        return True
    if value in _FALSE:
        return False
    raise EnvError(f"{name}={raw!r} is not a boolean (use one of 1/0, true/false, yes/no, on/off)")


def env_int(name: str, default: int, minimum: int | None = None) -> int:
    _DEFAULTS_READ[name] = default
    raw = os.environ.get(name)
    if raw is None or raw.strip() == "":
        return default
    try:
        value = int(raw.strip())
    except ValueError:
        raise EnvError(f"{name}={raw!r} is not an integer") from None
    if minimum is not None and value < minimum:
        raise EnvError(f"{name}={value} must be at least {minimum}")
    return value


def env_list(name: str, default: list[str]) -> list[str]:
    _DEFAULTS_READ[name] = default
    raw = os.environ.get(name)
    if raw is None:
        return default
    items = [item.strip() for item in raw.split(",")]
    if any(not item for item in items):
        raise EnvError(f"{name}={raw!r} has an empty entry (comma-separated list expected)")
    return items


def parse_database_url(url: str) -> dict[str, Any]:
    """Turn `sqlite:///PATH` or `postgres://user:pass@host:port/name` into a DATABASES entry."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    if scheme == "sqlite":
        # sqlite:///relative/path or sqlite:////absolute/path, as dj-database-url reads them.
        path = unquote(parts.path[1:] if parts.path.startswith("/") else parts.path)
        if parts.netloc or not path:
            raise EnvError(f"DATABASE_URL={url!r}: expected sqlite:///PATH")
        return {"ENGINE": "django.db.backends.sqlite3", "NAME": path}
    if scheme in {"postgres", "postgresql", "pgsql"}:
        name = unquote(parts.path.lstrip("/"))
        if not name:
            raise EnvError(f"DATABASE_URL={url!r}: the database name is missing")
        options = {key: values[-1] for key, values in parse_qs(parts.query).items()}
        try:
            port = parts.port
        except ValueError:
            raise EnvError(f"DATABASE_URL={url!r}: the port is not a number") from None
        config = {
            "ENGINE": "django.db.backends.postgresql",
            "NAME": name,
            "USER": unquote(parts.username or ""),
            "PASSWORD": unquote(parts.password or ""),
            "HOST": unquote(parts.hostname or ""),
            "PORT": str(port or ""),
            "CONN_MAX_AGE": int(options.pop("conn_max_age", 60)),
            # A kept connection is checked before a request uses it: after a database restart
            # the first request of each process reconnects instead of failing.
            "CONN_HEALTH_CHECKS": True,
            "OPTIONS": options,
        }
        return config
    raise EnvError(f"DATABASE_URL={url!r}: unsupported scheme {scheme!r} (sqlite or postgres)")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="The declared environment variables.")
    parser.add_argument("--markdown", action="store_true", help="print docs/environment.md")
    if parser.parse_args().markdown:
        print(markdown(), end="")
    else:
        print("\n".join(sorted(declared_names())))
