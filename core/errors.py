"""The domain's errors: one hierarchy, each class saying its HTTP status (`status`), mapped
once for the API (`api/exception_handler.py`) and once for the pages (`core/page_errors.py`).

- `Invalid` (400): the input is wrong (a score out of range, an unknown task, a template
  without its markers), with a message per field when the service knows which field.
- `NotFound` (404): what the input names does not exist, or not for this user.
- `Refused` (409): the request is well formed but the state forbids it (a closed
  assignment, a run that is not running, a judge with results).

Services raise their own subclasses (`RunRefused`, `RatingInvalid`, …) so that callers may
still catch one area's errors. The mappers read `status` and nothing else: a subclass whose
answer differs from its base's says so with its own `status` (and why, in its docstring).
Lowest layer: every app may import it; it imports nothing of Django.
"""

from __future__ import annotations

from collections.abc import Mapping

# A field's messages, or for a nested input (a rating's `aspects`) the same shape per key.
# A Mapping (read-only, so covariant): a service's `dict[str, list[str]]` is one as it is.
FieldErrors = Mapping[str, "list[str] | FieldErrors"]


class DomainError(Exception):
    """`message` is for the user (shown as is, escaped); `fields` maps input fields to their
    messages when the error is about particular fields; `status` is the HTTP answer."""

    status: int = 400

    def __init__(self, message: str = "", fields: FieldErrors | None = None):
        super().__init__(message)
        self.message = message
        self.fields: FieldErrors = fields or {}


class Invalid(DomainError):
    """The input is wrong (HTTP 400), with field messages when known."""

    status = 400


class NotFound(DomainError):
    """What the request names does not exist, or not for this user (HTTP 404)."""

    status = 404


class Refused(DomainError):
    """The state forbids the action now (HTTP 409)."""

    status = 409
