"""Request body parsers that treat the body as hostile.

- JSON: json.load recurses once per nesting level, so `"[" * 100000` is a RecursionError, a
  500. This parser refuses a body nested deeper than MAX_JSON_DEPTH with a 400 before
  parsing. (Its size: DRF reads JSON and form bodies through `request.body`, which Django
  bounds by DATA_UPLOAD_MAX_MEMORY_SIZE with a 400.) A body that is not a JSON object
  (`[]`, `null`, `true`, `1`, `"x"`) is refused here too: every body of the API is an object,
  and code that reads `request.data` as a mapping (`.get`, a serializer's `initial_data`)
  would otherwise fail with a 500 on the first one that is not.
- Multipart: Django refuses form fields above DATA_UPLOAD_MAX_MEMORY_SIZE (files are streamed
  to disk and bounded by the importers) and too many fields or files with exceptions that
  DRF lets through, answered by an HTML "Bad Request" page saying nothing. This parser turns
  them into a 413 / 400 with a JSON `{"detail": ...}` like every API error.

The JSON parser belongs in REST_FRAMEWORK["DEFAULT_PARSER_CLASSES"] (config/settings.py);
the import actions, which take multipart bodies only, name their parsers.
"""

from django.conf import settings
from django.core.exceptions import RequestDataTooBig, TooManyFieldsSent, TooManyFilesSent
from rest_framework import parsers, status
from rest_framework.exceptions import APIException, ParseError

from content.importing.upload_limits import MAX_JSON_DEPTH, json_too_deep


class BodyTooLarge(APIException):
    status_code = status.HTTP_413_REQUEST_ENTITY_TOO_LARGE
    default_detail = "The request body is too large."
    default_code = "body_too_large"


class JSONParser(parsers.JSONParser):
    """DRF's JSONParser, with the nesting of the body checked first."""

    def parse(self, stream, media_type=None, parser_context=None):
        encoding = parsers.get_encoding(parser_context or {})  # text encodings only
        body = stream.read()  # DRF hands over request.body, already bounded, as BytesIO
        try:
            text = body.decode(encoding)
        except UnicodeDecodeError as exc:
            raise ParseError(f"JSON parse error - {exc}") from None
        problem = json_too_deep(text, MAX_JSON_DEPTH)
        if problem is not None:
            raise ParseError(f"JSON parse error - {problem}")
        stream.seek(0)
        data = super().parse(stream, media_type, parser_context)
        if not isinstance(data, dict):
            raise ParseError(
                f"JSON parse error - the body must be a JSON object, not {_json_kind(data)}"
            )
        return data


def _json_kind(value) -> str:
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, str):
        return "a string"
    return "a number"


class MultiPartParser(parsers.MultiPartParser):
    """DRF's MultiPartParser, answering Django's size and count refusals as API errors."""

    def parse(self, stream, media_type=None, parser_context=None):
        try:
            return super().parse(stream, media_type, parser_context)
        except RequestDataTooBig:
            raise BodyTooLarge(
                f"the form fields of the body are larger than "
                f"{settings.DATA_UPLOAD_MAX_MEMORY_SIZE} bytes (DATA_UPLOAD_MAX_MEMORY_SIZE); "
                "send data files as file fields"
            ) from None
        except (TooManyFieldsSent, TooManyFilesSent) as exc:
            raise ParseError(f"Multipart form parse error - {exc}") from None
