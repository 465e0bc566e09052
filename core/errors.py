"""The domain's errors: one hierarchy, mapped to HTTP once for the API (`api/errors.py`) and
once for the pages (`core/page_errors.py`).

- `Refused`: the request is well formed but the state forbids it (a closed assignment, a run
  that is not running, a judge with results) → 409.
- `Invalid`: the input is wrong (a score out of range, an unknown task, a template without
  its markers) → 400, with a message per field when the service knows which field.

Services raise their own subclasses (`RunRefused`, `RatingInvalid`, …) so that callers may
still catch one area's errors; the mappings only look at these two bases. A class that is
both (a subclass kept for callers that catch the older base) counts as `Invalid`.
Lowest layer: every app may import it; it imports nothing of Django.
"""

from __future__ import annotations

# A field's messages, or for a nested input (a rating's `aspects`) the same shape per key.
FieldErrors = dict[str, "list[str] | FieldErrors"]


class DomainError(Exception):
    """`message` is for the user (shown as is, escaped); `fields` maps input fields to their
    messages when the error is about particular fields."""

    def __init__(self, message: str = "", fields: FieldErrors | None = None):
        super().__init__(message)
        self.message = message
        self.fields: FieldErrors = fields or {}


class Refused(DomainError):
    """The state forbids the action now (HTTP 409)."""


class Invalid(DomainError):
    """The input is wrong (HTTP 400), with field messages when known."""


def status_of(error: DomainError) -> int:
    """The HTTP status of a domain error: 400 for input errors, 409 for refusals."""
    return 400 if isinstance(error, Invalid) else 409
