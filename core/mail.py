"""Whether this server sends mail (invitation links, password resets)."""

from django.conf import global_settings, settings


def mail_configured() -> bool:
    """True when the operator set EMAIL_HOST (config/settings.py then selects the SMTP backend
    and the host), or another EMAIL_BACKEND is set (a console or file backend, the tests'
    memory backend). Without it Django would try localhost:25 for every mail."""
    return (
        settings.EMAIL_BACKEND != global_settings.EMAIL_BACKEND
        or settings.EMAIL_HOST != global_settings.EMAIL_HOST
    )
