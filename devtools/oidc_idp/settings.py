"""The test provider's settings: only what django-oidc-provider needs. Read from the
environment that __main__.py sets before Django starts (never Arbiter's settings)."""

import os

SECRET_KEY = os.environ["IDP_SECRET_KEY"]
DEBUG = False
ALLOWED_HOSTS = ["127.0.0.1", "localhost"]
SITE_URL = os.environ["IDP_SITE_URL"]  # the issuer is SITE_URL + "/openid"

INSTALLED_APPS = [
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "oidc_provider",
    "devtools.oidc_idp",
]
MIDDLEWARE = [
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
]
ROOT_URLCONF = "devtools.oidc_idp.urls"
TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "APP_DIRS": True,
        "OPTIONS": {"context_processors": ["django.template.context_processors.request"]},
    }
]
DATABASES = {
    "default": {"ENGINE": "django.db.backends.sqlite3", "NAME": os.environ["IDP_DATABASE"]}
}
DEFAULT_AUTO_FIELD = "django.db.models.AutoField"
USE_TZ = True
LOGIN_URL = "/login/"
PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]  # test users only

OIDC_USERINFO = "devtools.oidc_idp.claims.userinfo"
OIDC_EXTRA_SCOPE_CLAIMS = "devtools.oidc_idp.claims.GroupsClaims"
OIDC_IDTOKEN_INCLUDE_CLAIMS = True  # e-mail and groups in the id token too, as most providers do
# The sub a relying party keys accounts by: fixed per user, as a real provider's is.
OIDC_IDTOKEN_SUB_GENERATOR = "devtools.oidc_idp.claims.subject"
LOGGING = {"version": 1, "root": {"level": "WARNING"}}
