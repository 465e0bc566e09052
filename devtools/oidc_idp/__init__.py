"""A real OpenID provider for the tests: django-oidc-provider in a small Django project of its
own (`python -m devtools.oidc_idp --redirect-uri URL --users JSON`). Not installed, not in the
image; its database is SQLite in a temporary folder, its RSA signing key is made at start.
See __main__.py."""
