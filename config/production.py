"""Deployment settings: `DJANGO_SETTINGS_MODULE=config.production`.

Requires SECRET_KEY and ALLOWED_HOSTS from the environment; HTTPS is assumed to be terminated
by the proxy in front of gunicorn, which sets X-Forwarded-Proto.

Weak settings stop the process here, at settings load, so gunicorn, Celery and every
management command refuse to start (`check --deploy` only warns, and only when someone runs
it).
"""

import os

from django.core.exceptions import ImproperlyConfigured

from config.env import EnvError, env_bool, env_int, env_str
from config.object_storage import media_storage
from config.settings import *  # noqa: F403
from config.settings import ALLOWED_HOSTS, SECRET_KEY

# Django's own check (security.W009) uses these numbers.
SECRET_KEY_MIN_LENGTH = 50
SECRET_KEY_MIN_UNIQUE_CHARACTERS = 5

if not env_str("SECRET_KEY"):
    raise EnvError("SECRET_KEY must be set in production")
if not env_str("ALLOWED_HOSTS"):
    raise EnvError("ALLOWED_HOSTS must be set in production")
if (
    len(SECRET_KEY) < SECRET_KEY_MIN_LENGTH
    or len(set(SECRET_KEY)) < SECRET_KEY_MIN_UNIQUE_CHARACTERS
    or SECRET_KEY.startswith("django-insecure")
):
    raise ImproperlyConfigured(
        f"SECRET_KEY is weak: use at least {SECRET_KEY_MIN_LENGTH} random characters, e.g. "
        "python3 -c 'import secrets; print(secrets.token_urlsafe(50))'"
    )
if "*" in ALLOWED_HOSTS:
    raise ImproperlyConfigured(
        "ALLOWED_HOSTS must name the site's host names, not '*' (Host header attacks)"
    )

DEBUG = env_bool("DEBUG", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
# Probes inside the network speak plain HTTP: the health check, readiness, Prometheus.
SECURE_REDIRECT_EXEMPT = [r"^healthz$", r"^readyz$", r"^metrics$"]
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
WHITENOISE_USE_FINDERS = False
STORAGES = {
    "default": media_storage(os.environ),  # the local disk unless S3_BUCKET is set
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
