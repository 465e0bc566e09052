"""JSON out, whatever came in."""

from rest_framework import renderers


class _AsciiJSONRenderer(renderers.JSONRenderer):
    ensure_ascii = True


class JSONRenderer(renderers.JSONRenderer):
    """DRF's renderer, except that text without a UTF-8 form (a lone surrogate from a JSON
    body, echoed back in an error message as a key or an invalid choice) is written escaped
    instead of failing the response."""

    def render(self, data, accepted_media_type=None, renderer_context=None):
        try:
            return super().render(data, accepted_media_type, renderer_context)
        except UnicodeEncodeError:
            return _AsciiJSONRenderer().render(data, accepted_media_type, renderer_context)
