"""Services' errors (core/errors.py) on the pages, mapped once:

- A page that lets a `DomainError` escape answers with a small page saying why: 409 for a
  `Refused`, 400 for an `Invalid`, the message escaped (`DomainErrorMiddleware`); htmx gets
  the fragment alone. The API has its own mapping (api/errors.py): DRF answers before this.
- A form that posts and redirects (post, redirect, get) shows the refusal as an error message
  on the page it redirects to instead: `with refusal_as_message(request): ...`.
Forms that re-render with the error beside its field catch the error themselves.
"""

from contextlib import contextmanager

from django.contrib import messages

from core.errors import DomainError, status_of
from core.htmx import render_fragment_or_page


class DomainErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DomainError):
            return None
        status = status_of(exception)
        context = {"error": exception, "status": status}
        return render_fragment_or_page(
            request, "_domain_error.html", "domain_error.html", context, status=status
        )


@contextmanager
def refusal_as_message(request, prefix: str = ""):
    """Run the block; a domain error stops it and becomes an error message (after `prefix`)
    for the next page. Put the success message inside the block, after the service call."""
    try:
        yield
    except DomainError as error:
        messages.error(request, f"{prefix}{error.message}")
