"""System checks of the embedded installation (`manage.py check` and every server start)."""

from django.conf import settings
from django.core import checks


def throwaway_secret_key(app_configs, **kwargs):
    if not getattr(settings, "SECRET_KEY_IS_THROWAWAY", False):
        return []
    return [
        checks.Warning(
            "No SECRET_KEY and no key file: this process made a throwaway key, so sign-ins "
            "end when it stops and several processes do not share them.",
            hint="Run `manage.py init_embedded` (make demo does) or set SECRET_KEY.",
            id="arbiter.W001",
        )
    ]
