"""Texts with numbers in them that are stored with precomputed figures (dashboards/snapshots.py
pickles them): translated when a page shows them, in that page's language, not when computed.
The msgid is marked for makemessages with gettext_noop at the call."""

from django.utils.functional import lazy
from django.utils.translation import gettext


def _interpolated(msgid: str, params: dict) -> str:
    # A list of texts reads as one, joined by commas (each item translated in turn).
    shown = {
        name: ", ".join(str(item) for item in value) if isinstance(value, list) else value
        for name, value in params.items()
    }
    return gettext(msgid) % shown


# A module-level function, so that the lazy text pickles (Django's lazy proxies pickle their
# function and arguments).
interpolate_lazy = lazy(_interpolated, str)
