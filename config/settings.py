"""Arbiter settings, read from environment variables (declared in config/env.py, listed in
docs/environment.md).

Embedded default: SQLite under ./var, Celery tasks run in-process, media on local disk.
With DATABASE_URL / REDIS_URL set: PostgreSQL and Redis. `config.production` tightens this
for a deployment (`manage.py check --deploy` is clean there).
"""

import os
import secrets
from pathlib import Path

from config.env import EnvError, env_bool, env_int, env_list, env_str, parse_database_url
from config.object_storage import media_storage
from config.oidc_settings import check_oidc_settings

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = Path(env_str("ARBITER_VAR_DIR") or BASE_DIR / "var")


SECRET_KEY_FILE = VAR_DIR / "secret_key"


def _embedded_secret_key() -> str:
    """The per-installation key `manage.py init_embedded` (run by `make demo`) keeps in ./var,
    so a laptop needs no configuration. Reading the settings never writes anything: without
    the file a process gets a throwaway key (its sessions end with it) and `check` warns."""
    try:
        return SECRET_KEY_FILE.read_text().strip()
    except OSError:
        return ""


SECRET_KEY = env_str("SECRET_KEY") or _embedded_secret_key()
SECRET_KEY_IS_THROWAWAY = not SECRET_KEY
SECRET_KEY = SECRET_KEY or secrets.token_urlsafe(64)
DEBUG = env_bool("DEBUG", False)
ALLOWED_HOSTS = env_list("ALLOWED_HOSTS", ["127.0.0.1", "localhost"])
CSRF_TRUSTED_ORIGINS = env_list("CSRF_TRUSTED_ORIGINS", [])

INSTALLED_APPS = [
    # The Django admin, for operators (superusers) only: see config/admin.py.
    "config.apps.OperatorAdminConfig",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "projects",
    "content",
    "annotation",
    "setup",
    "judging",
    "imports",
    "metrics",
    "exports",
    "dashboards",
    "operations",
    "notifications",
    "webhooks",
    "audit",  # before auditlog: its `auditlogflush` refuses in place of auditlog's
    "auditlog",  # the audit trail's recorder; its entries are audit.AuditEntry
    "rest_framework",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "api",
    "demo",
]

MIDDLEWARE = [
    # Request counts and latencies for /metrics (operations/prometheus.py): first and last.
    "django_prometheus.middleware.PrometheusBeforeMiddleware",
    "core.server_timing.ServerTimingMiddleware",  # it times all the others too
    "django.middleware.security.SecurityMiddleware",
    "core.csp.ContentSecurityPolicyMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.locale.LocaleMiddleware",  # after sessions, before common (docs)
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "audit.middleware.RequestContextMiddleware",  # who and from where, for the audit trail
    "django.contrib.messages.middleware.MessageMiddleware",
    "django_htmx.middleware.HtmxMiddleware",  # request.htmx (core/htmx.py)
    "core.page_errors.DomainErrorMiddleware",  # a service's refusal → a 409/400 page
    "core.nul_characters.NulCharacterMiddleware",  # a NUL sent to a page → 400, no view runs
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "django_prometheus.middleware.PrometheusAfterMiddleware",
]

# Server-Timing on every response (core/server_timing.py): off unless the operator asks.
ARBITER_SERVER_TIMING = env_bool("ARBITER_SERVER_TIMING", False)

# The audit trail (audit/): django-auditlog writes Arbiter's own entry model.
AUDITLOG_LOGENTRY_MODEL = "audit.AuditEntry"
# auditlog's own migrations make its default entry table, unused once swapped, whose foreign
# key to the users would block PostgreSQL's TRUNCATE of them (a flush): they are not run.
MIGRATION_MODULES = {"auditlog": None}

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.template.context_processors.i18n",  # LANGUAGE_CODE, LANGUAGE_BIDI
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "notifications.context_processors.bell",  # the header's unread count
                "projects.context_processors.account_menu",  # the header's API links
            ],
        },
    },
]

DATABASE_URL = env_str("DATABASE_URL") or f"sqlite:///{VAR_DIR / 'arbiter.sqlite3'}"
DATABASES = {"default": parse_database_url(DATABASE_URL)}
if DATABASES["default"]["ENGINE"].endswith("sqlite3"):
    # WAL lets the demo server read while an import writes; a busy wait instead of
    # "database is locked" when two writers meet.
    DATABASES["default"]["OPTIONS"] = {
        "timeout": 20,
        "transaction_mode": "IMMEDIATE",
        "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
    }
IS_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]
# Django's model backend, refusing the placeholder accounts of imported ratings.
AUTHENTICATION_BACKENDS = ["config.auth_backends.PeopleOnlyBackend"]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "/"

# The interface's languages: the browser's Accept-Language chooses, the header's
# switch overrides it (a cookie, django.views.i18n.set_language). Catalogs in locale/.
LANGUAGE_CODE = "en"
LANGUAGES = [("en", "English"), ("zh-hans", "简体中文")]
LOCALE_PATHS = [BASE_DIR / "locale"]
TIME_ZONE = env_str("TIME_ZONE", "UTC")
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATICFILES_DIRS = [BASE_DIR / "static"]
STATIC_ROOT = Path(env_str("STATIC_ROOT") or VAR_DIR / "staticfiles")
# Serve straight from the app folders until collectstatic has run (embedded mode).
WHITENOISE_USE_FINDERS = True

MEDIA_ROOT = Path(env_str("MEDIA_ROOT") or VAR_DIR / "media")
MEDIA_URL = "media/"
# Media on the local disk, or on an S3-compatible store when S3_BUCKET is set
# (config/object_storage.py; docs/operators.md "Object storage").
STORAGES = {
    "default": media_storage(os.environ),
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}

# Image checks on import and cleaning: formats Arbiter accepts, and the decompression-bomb
# limits, read from the headers before decoding (content/image_frames.py): pixels summed over
# an animation's frames, and its number of frames (an image above them is refused).
ARBITER_IMAGE_FORMATS = env_list("ARBITER_IMAGE_FORMATS", ["JPEG", "PNG", "WEBP", "GIF"])
ARBITER_MAX_IMAGE_PIXELS = env_int("ARBITER_MAX_IMAGE_PIXELS", 64_000_000, minimum=1)
ARBITER_MAX_IMAGE_FRAMES = env_int("ARBITER_MAX_IMAGE_FRAMES", 100, minimum=1)
ARBITER_MAX_IMAGE_BYTES = env_int("ARBITER_MAX_IMAGE_BYTES", 50 * 1024 * 1024, minimum=1)
# Longest text (a prompt, a response's text part, a rationale) an import or form accepts.
ARBITER_MAX_TEXT_CHARS = env_int("ARBITER_MAX_TEXT_CHARS", 200_000, minimum=1)

# Uploads and imports (imports/services/pair_upload.py, json_stream.py): every file is read one
# record at a time, so an import's memory follows its largest record, not its file.
ARBITER_UPLOAD_MAX_BYTES = env_int("ARBITER_UPLOAD_MAX_BYTES", 1024**3, minimum=1)  # a pair file
ARBITER_UPLOAD_MAX_UNPACKED_BYTES = env_int(
    "ARBITER_UPLOAD_MAX_UNPACKED_BYTES", 4 * 1024**3, minimum=1
)  # an archive's members together, or a Parquet file's columns
ARBITER_UPLOAD_MAX_MEMBERS = env_int("ARBITER_UPLOAD_MAX_MEMBERS", 100_000, minimum=1)
ARBITER_UPLOAD_MAX_RATIO = env_int("ARBITER_UPLOAD_MAX_RATIO", 200, minimum=1)
# A prediction or score file (judges' verdicts), refused unread above this.
ARBITER_VERDICT_FILE_MAX_BYTES = env_int("ARBITER_VERDICT_FILE_MAX_BYTES", 256 * 1024**2, minimum=1)
# One record of a JSON or JSONL file (a line, a pair): parsing multiplies its size up to ~25
# times, so this bounds an import's memory.
ARBITER_IMPORT_MAX_RECORD_BYTES = env_int(
    "ARBITER_IMPORT_MAX_RECORD_BYTES", 16 * 1024**2, minimum=1024
)
# One record of a prediction or score file (a pair's entry: at most 20 samples per order, each
# judgement with its raw output, kept up to 20,000 characters; or one row of scores), measured
# before it is parsed (judging/prediction_records.py).
ARBITER_VERDICT_MAX_RECORD_BYTES = env_int(
    "ARBITER_VERDICT_MAX_RECORD_BYTES", 2 * 1024**2, minimum=1024
)

# Mail, for invitation links: without EMAIL_HOST nothing is sent and the lead copies the link.
if env_str("EMAIL_HOST"):
    EMAIL_BACKEND = "django.core.mail.backends.smtp.EmailBackend"
    EMAIL_HOST = env_str("EMAIL_HOST")
    EMAIL_PORT = env_int("EMAIL_PORT", 587, minimum=1)
    EMAIL_HOST_USER = env_str("EMAIL_HOST_USER")
    EMAIL_HOST_PASSWORD = env_str("EMAIL_HOST_PASSWORD")
    EMAIL_USE_TLS = env_bool("EMAIL_USE_TLS", True)
    DEFAULT_FROM_EMAIL = env_str("DEFAULT_FROM_EMAIL") or f"arbiter@{EMAIL_HOST}"
# The address people open Arbiter at, for the links in notification mails (sent from a
# worker, which has no request to read it from).
ARBITER_BASE_URL = env_str("ARBITER_BASE_URL") or "http://127.0.0.1:8000"

REDIS_URL = env_str("REDIS_URL")
if REDIS_URL:
    # Redis accelerates; a page never fails because it is down (core/cache.py).
    CACHES = {
        "default": {
            "BACKEND": "core.cache.FallbackRedisCache",
            "LOCATION": REDIS_URL,
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
else:
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"}}

# Celery: Redis broker in the full stack, in-process execution in the embedded mode.
# The embedded mode's in-memory broker, with its host named: Celery still opens a connection
# to it to send a task it runs in-process, and kombu warns "No hostname was supplied" at each
# process's first when the URL names none.
CELERY_BROKER_URL = REDIS_URL or "memory://localhost/"
CELERY_RESULT_BACKEND = None
CELERY_TASK_ALWAYS_EAGER = not REDIS_URL
CELERY_TASK_EAGER_PROPAGATES = True
CELERY_TASK_ACKS_LATE = True  # a task is acknowledged only after it ran ...
CELERY_TASK_REJECT_ON_WORKER_LOST = True  # ... and goes back to the queue if its worker dies
CELERY_WORKER_PREFETCH_MULTIPLIER = 1
CELERY_TASK_TIME_LIMIT = env_int("CELERY_TASK_TIME_LIMIT", 1800, minimum=1)
CELERY_TASK_SOFT_TIME_LIMIT = CELERY_TASK_TIME_LIMIT - 60 if CELERY_TASK_TIME_LIMIT > 120 else None
# Redis re-delivers a task that was not acknowledged (its worker died) after this many
# seconds; longer than the longest task, or a slow task is delivered twice (harmless for the
# idempotent judge chunks, but wasted work).
CELERY_BROKER_TRANSPORT_OPTIONS = {
    "visibility_timeout": env_int(
        "CELERY_VISIBILITY_TIMEOUT", CELERY_TASK_TIME_LIMIT * 2, minimum=1
    )
}
CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
# How often judge runs submitted to a provider's batch API are asked for their answers
# (Celery beat: `celery -A config beat`, or a worker started with -B).
ARBITER_BATCH_POLL_SECONDS = env_int("ARBITER_BATCH_POLL_SECONDS", 30, minimum=1)
# Jobs accepted while the broker was unreachable are sent this often (core/outbox.py).
ARBITER_OUTBOX_SWEEP_SECONDS = env_int("ARBITER_OUTBOX_SWEEP_SECONDS", 30, minimum=1)
ARBITER_FIGURES_REFRESH_SECONDS = env_int("ARBITER_FIGURES_REFRESH_SECONDS", 60, minimum=1)
# Webhooks (webhooks/): the seconds before each retry of a failed delivery (by default 5
# attempts: at once, then after 1 min, 5 min, 30 min, 2 h; Celery beat sends them), and
# each attempt's timeout.
ARBITER_WEBHOOK_RETRY_SECONDS = env_list(
    "ARBITER_WEBHOOK_RETRY_SECONDS", ["60", "300", "1800", "7200"]
)
ARBITER_WEBHOOK_TIMEOUT_SECONDS = env_int("ARBITER_WEBHOOK_TIMEOUT_SECONDS", 5, minimum=1)
# Judges and webhook receivers on private, loopback or reserved addresses (core/outbound.py):
# refused unless the operator allows them (a model served inside the organisation).
ARBITER_ALLOW_PRIVATE_ADDRESSES = env_bool("ARBITER_ALLOW_PRIVATE_ADDRESSES", False)
# A dashboard page whose figures took longer than this to compute is not recomputed in the
# request after a change: its last figures are shown, marked, while a refresh runs behind.
ARBITER_FIGURES_INLINE_MS = env_int("ARBITER_FIGURES_INLINE_MS", 500, minimum=0)
# An import, a finished judge run or a decided pair starts the refresh of the figures it
# changes (dashboards/snapshots.py::figures_prepare), so the next visitor does not wait.
ARBITER_FIGURES_AHEAD = True
# The scheduled jobs, each once: (name, Celery task, the setting holding its period in
# seconds). Celery beat runs them on the full stack (CELERY_BEAT_SCHEDULE, below, is made from
# this table); in the embedded mode a thread of the web server's process does
# (core/scheduled_jobs.py), so the same jobs run in both modes.
ARBITER_SCHEDULED_JOBS = [
    # Jobs accepted while the broker was unreachable (core/outbox.py).
    ("outbox-sweep", "config.outbox_sweep", "ARBITER_OUTBOX_SWEEP_SECONDS"),
    # Judge runs waiting for a provider's batch (judging/services/batches.py).
    ("judge-batches-poll", "judging.tasks.judge_batches_poll", "ARBITER_BATCH_POLL_SECONDS"),
    # Dashboard pages whose project's data changed since their figures were computed
    # (dashboards/snapshots.py), so the lead's next view is current without waiting.
    (
        "figures-refresh-stale",
        "dashboards.tasks.figures_refresh_stale",
        "ARBITER_FIGURES_REFRESH_SECONDS",
    ),
    # Webhook deliveries whose retry is due (webhooks/services.py::deliveries_due_send).
    ("webhook-retries", "webhooks.tasks.deliveries_retry", "ARBITER_OUTBOX_SWEEP_SECONDS"),
]
CELERY_BEAT_SCHEDULE = {
    name: {
        "task": task,
        "schedule": globals()[period],
        "options": {"expires": globals()[period]},  # never a backlog of runs
    }
    for name, task, period in ARBITER_SCHEDULED_JOBS
}
# The embedded mode's scheduler thread starts with the web server (config/wsgi.py, asgi.py);
# the tests turn it off and start it where they ask for it.
ARBITER_SCHEDULER_IN_PROCESS = True

SESSION_COOKIE_HTTPONLY = True
CSRF_COOKIE_HTTPONLY = False  # htmx reads the token from the cookie
X_FRAME_OPTIONS = "DENY"
SECURE_CONTENT_TYPE_NOSNIFF = True

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env_str("LOG_LEVEL", "WARNING").upper()},
    "filters": {"denials_on_one_line": {"()": "core.request_logging.DenialsOnOneLine"}},
    "loggers": {
        # One line per judge call at INFO would drown everything else.
        "aiohttp.access": {"level": "WARNING"},
        # A 403 is an expected answer: one line, no traceback.
        "django.request": {"filters": ["denials_on_one_line"]},
    },
}

# Proxies in front of the app: the client address is taken from X-Forwarded-For only
# through that many of them (0: REMOTE_ADDR, a forged header cannot dodge a limit).
ARBITER_TRUSTED_PROXIES = env_int("ARBITER_TRUSTED_PROXIES", 0, minimum=0)
# Password guessing (core/login_limits.py): failed sign-ins allowed per account and per
# client address within one window; every login form and the API token share them.
ARBITER_LOGIN_FAILURES_PER_ACCOUNT = env_int("ARBITER_LOGIN_FAILURES_PER_ACCOUNT", 10, minimum=1)
ARBITER_LOGIN_FAILURES_PER_ADDRESS = env_int("ARBITER_LOGIN_FAILURES_PER_ADDRESS", 50, minimum=1)
ARBITER_LOGIN_WINDOW_SECONDS = env_int("ARBITER_LOGIN_WINDOW_SECONDS", 15 * 60, minimum=1)

# REST API (/api/, docs/api.md): tokens for scripts, the session for the browser (with
# DRF's CSRF check), everything authenticated unless a view says otherwise, every list paged.
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "api.authentication.ApiTokenAuthentication",  # projects/services/api_tokens.py
        "rest_framework.authentication.SessionAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_PAGINATION_CLASS": "api.pagination.Pagination",
    "PAGE_SIZE": 50,
    "DEFAULT_SCHEMA_CLASS": "api.schema.ArbiterAutoSchema",
    "DEFAULT_RENDERER_CLASSES": [
        "api.renderers.JSONRenderer",
        "rest_framework.renderers.BrowsableAPIRenderer",
    ],
    "DEFAULT_PARSER_CLASSES": [
        "api.parsers.JSONParser",  # refuses deep nesting before parsing (a 400, not a 500)
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "TEST_REQUEST_DEFAULT_FORMAT": "json",
    # Services' errors (core/errors.py) → 409 or 400, once for every view.
    "EXCEPTION_HANDLER": "api.exception_handler.exception_handler",
    # Password guessing through POST /api/auth/token/: attempts per client address.
    "DEFAULT_THROTTLE_RATES": {
        "token-login": f"{env_int('ARBITER_TOKEN_LOGINS_PER_MINUTE', 20, minimum=1)}/minute"
    },
    # The same reading of the client address as core/client_address.py.
    "NUM_PROXIES": ARBITER_TRUSTED_PROXIES,
}
# API tokens (projects/services/api_tokens.py): lifetime by default and at most, in days, and
# how many usable tokens one user may hold.
ARBITER_API_TOKEN_DAYS = env_int("ARBITER_API_TOKEN_DAYS", 30, minimum=1)
ARBITER_API_TOKEN_MAX_DAYS = env_int("ARBITER_API_TOKEN_MAX_DAYS", 365, minimum=1)
if ARBITER_API_TOKEN_DAYS > ARBITER_API_TOKEN_MAX_DAYS:
    raise EnvError(
        f"ARBITER_API_TOKEN_DAYS={ARBITER_API_TOKEN_DAYS} exceeds "
        f"ARBITER_API_TOKEN_MAX_DAYS={ARBITER_API_TOKEN_MAX_DAYS}"
    )
ARBITER_API_TOKENS_PER_USER = env_int("ARBITER_API_TOKENS_PER_USER", 50, minimum=1)
SPECTACULAR_SETTINGS = {
    "TITLE": "Arbiter API",
    "DESCRIPTION": (
        "Expert preference benchmarks for multimodal AI judges. Authenticate with "
        "`Authorization: Token <key>`: an API token made on your account page "
        "(/accounts/tokens/), by POST /api/auth/token/ (username and password: a new token "
        "with the default lifetime) or by an operator (`manage.py api_token_create`). A token "
        "expires, may be read-only (a write answers 403) and may reach one project only (any "
        "other project's objects answer 404, like missing ones); an expired or revoked token "
        "answers 401 like an unknown one. The session of the web app works too (CSRF token "
        "required on writes)."
    ),
    "VERSION": "1",
    "SERVE_INCLUDE_SCHEMA": False,
    "COMPONENT_SPLIT_REQUEST": True,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    # No deep links: Swagger UI draws each one as a link inside the operation's button, which
    # keyboards and screen readers cannot reach (axe-core: nested-interactive).
    "SWAGGER_UI_SETTINGS": {"deepLinking": False},
    "REDOC_DIST": "SIDECAR",
    "ENUM_NAME_OVERRIDES": {
        "AssignmentStatusEnum": "annotation.models.Assignment.Status",
        "PairStatusEnum": "content.models.Pair.Status",
        "RunStatusEnum": "judging.models.JudgeRun.Status",
    },
}

# Sign-in through the organisation: OpenID Connect, authorization code with PKCE
# (config/oidc.py; docs/sign-in.md). Off unless
# ARBITER_OIDC_ISSUER is set. Endpoints: all of authorization, token and JWKS (userinfo
# optional), or none, and then they are read from the issuer's discovery document.
ARBITER_OIDC_ISSUER = env_str("ARBITER_OIDC_ISSUER")
ARBITER_OIDC_NAME = env_str("ARBITER_OIDC_NAME")  # the button: "Sign in with <name>"
ARBITER_OIDC_CLIENT_ID = env_str("ARBITER_OIDC_CLIENT_ID")
ARBITER_OIDC_CLIENT_SECRET = env_str("ARBITER_OIDC_CLIENT_SECRET")
ARBITER_OIDC_SIGN_ALGO = env_str("ARBITER_OIDC_SIGN_ALGO", "RS256")
ARBITER_OIDC_SCOPES = env_str("ARBITER_OIDC_SCOPES", "openid email profile")
ARBITER_OIDC_AUTHORIZATION_ENDPOINT = env_str("ARBITER_OIDC_AUTHORIZATION_ENDPOINT")
ARBITER_OIDC_TOKEN_ENDPOINT = env_str("ARBITER_OIDC_TOKEN_ENDPOINT")
ARBITER_OIDC_USERINFO_ENDPOINT = env_str("ARBITER_OIDC_USERINFO_ENDPOINT")
ARBITER_OIDC_JWKS_ENDPOINT = env_str("ARBITER_OIDC_JWKS_ENDPOINT")
ARBITER_OIDC_TIMEOUT_SECONDS = env_int("ARBITER_OIDC_TIMEOUT_SECONDS", 10, minimum=1)
# Roles from a claim (projects/services/identities.py): values of ARBITER_OIDC_ROLE_CLAIM that
# make an operator (superuser) or a lead who may create projects; empty: no mapping.
ARBITER_OIDC_ROLE_CLAIM = env_str("ARBITER_OIDC_ROLE_CLAIM", "groups")
ARBITER_OIDC_OPERATOR_VALUES = env_list("ARBITER_OIDC_OPERATOR_VALUES", [])
ARBITER_OIDC_LEAD_VALUES = env_list("ARBITER_OIDC_LEAD_VALUES", [])
# Local passwords (the sign-in form, password reset, POST /api/auth/token/, the admin's form);
# off only with OIDC on. Break-glass: docs/sign-in.md.
ARBITER_PASSWORD_SIGN_IN = env_bool("ARBITER_PASSWORD_SIGN_IN", True)
check_oidc_settings(globals())
AUTHENTICATION_BACKENDS += ["config.oidc.OrganisationBackend"]
