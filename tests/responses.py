"""Comparing answers byte for byte: "out of scope" must answer exactly like "does not exist"."""

import re

_CSRF_TOKEN = re.compile(rb'name="csrfmiddlewaretoken" value="[^"]*"')


def unmasked(body: bytes) -> bytes:
    """A page without its CSRF token (base.html's logout form, e.g. on the 404 page): Django
    masks the token anew for every response, so two equal pages never have equal bytes."""
    return _CSRF_TOKEN.sub(b"", body)
