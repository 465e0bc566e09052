"""The API's one mapping of domain errors to HTTP (REST_FRAMEWORK["EXCEPTION_HANDLER"]), so
views call services without translating their errors. The status is the error's own
(`error.status`, core/errors.py):

- a 400 answers its field messages `{"field": ["message"], ...}` (the shape of the
  serializers' own 400s), or `{"detail": message}` when no field is named;
- a 429 (a limit on how often a person may do something) answers `{"detail": message}` with
  `Retry-After` when the error knows when (`retry_after`), as DRF's own throttles do;
- any other status answers `{"detail": message}` (409 for a refusal, 404 for a name that
  leads nowhere);
- Django's ValidationError (model checks) → 400 the same way.

Everything else goes to DRF's handler unchanged.
"""

from django.core.exceptions import ValidationError as DjangoValidationError
from rest_framework import status
from rest_framework.exceptions import APIException, NotFound, Throttled, ValidationError
from rest_framework.views import exception_handler as drf_exception_handler

from core.errors import DomainError, FieldErrors


class Conflict(APIException):
    status_code = status.HTTP_409_CONFLICT
    default_detail = "The request conflicts with the current state."
    default_code = "conflict"


_ANSWERS = {status.HTTP_404_NOT_FOUND: NotFound, status.HTTP_409_CONFLICT: Conflict}


def bad_request(message: str, fields: FieldErrors | None = None) -> ValidationError:
    """A 400: the field messages when there are some, else `{"detail": message}`."""
    return ValidationError(fields or {"detail": str(message)})


def field_errors(error: DjangoValidationError) -> ValidationError:
    """A Django validation error → a 400 with its field messages."""
    if hasattr(error, "error_dict"):
        return bad_request(
            "", {key: list(messages) for key, messages in error.message_dict.items()}
        )
    return bad_request(" ".join(error.messages))


def domain_answer(error: DomainError) -> APIException:
    """The DRF exception that answers a domain error at its status."""
    if error.status == status.HTTP_400_BAD_REQUEST:
        return bad_request(error.message, error.fields)
    if error.status == status.HTTP_429_TOO_MANY_REQUESTS:
        return Throttled(wait=getattr(error, "retry_after", None), detail=error.message)
    answer = _ANSWERS.get(error.status)
    if answer is not None:
        return answer(error.message)
    other = APIException(error.message)
    other.status_code = error.status
    return other


def as_api_exception(error: Exception) -> Exception:
    """The DRF exception that answers for a domain or Django validation error; others as is."""
    if isinstance(error, DomainError):
        return domain_answer(error)
    if isinstance(error, DjangoValidationError):
        return field_errors(error)
    return error


def exception_handler(exc, context):
    return drf_exception_handler(as_api_exception(exc), context)
