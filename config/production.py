"""Deployment settings: `DJANGO_SETTINGS_MODULE=config.production`.

Requires SECRET_KEY and ALLOWED_HOSTS from the environment; HTTPS is assumed to be terminated
by the proxy in front of gunicorn, which sets X-Forwarded-Proto.
"""

from config.env import EnvError, env_bool, env_int, env_str
from config.settings import *  # noqa: F403

if not env_str("SECRET_KEY"):
    raise EnvError("SECRET_KEY must be set in production")
if not env_str("ALLOWED_HOSTS"):
    raise EnvError("ALLOWED_HOSTS must be set in production")

DEBUG = env_bool("DEBUG", False)
SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", True)
SECURE_REDIRECT_EXEMPT = [r"^healthz$"]  # the container health check speaks plain HTTP
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = True
SECURE_HSTS_PRELOAD = True
SESSION_COOKIE_SECURE = True
CSRF_COOKIE_SECURE = True
WHITENOISE_USE_FINDERS = False
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedManifestStaticFilesStorage"},
}
