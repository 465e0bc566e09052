"""The API's one mapping of domain errors to HTTP (REST_FRAMEWORK["EXCEPTION_HANDLER"]), so
views call services without translating their errors:

- `Refused` (core/errors.py) → 409 `{"detail": message}`;
- `Invalid` → 400 with its field messages `{"field": ["message"], ...}` (the shape of the
  serializers' own 400s), or `{"detail": message}` when no field is named;
- Django's ValidationError (model and service checks) → 400 the same way.

Everything else goes to DRF's handler unchanged.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.exceptions import APIException, ValidationError
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import DomainError, Invalid


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


def bad_request(message: str, fields: dict | None = None) -> ValidationError:
    """A 400: the field messages when there are some, else `{"detail": message}`."""
    return ValidationError(fields or {"detail": str(message)})


def field_errors(error: DjangoValidationError) -> ValidationError:
    """A Django validation error → a 400 with its field messages."""
    if hasattr(error, "error_dict"):
        return bad_request(
            "", {key: list(messages) for key, messages in error.message_dict.items()}
        )
    return bad_request(" ".join(error.messages))


def as_api_exception(error: Exception) -> Exception:
    """The DRF exception that answers for a domain or Django validation error; others as is."""
    if isinstance(error, Invalid):
        return bad_request(error.message, error.fields)
    if isinstance(error, DomainError):
        return Conflict(error.message)
    if isinstance(error, DjangoValidationError):
        return field_errors(error)
    return error


def exception_handler(exc, context):
    return drf_exception_handler(as_api_exception(exc), context)
