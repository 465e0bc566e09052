"""Services' errors (core/errors.py) on the pages, mapped once; every status is the error's own
(`error.status`), never chosen by a view:

- A page that lets a `DomainError` escape answers with a small page saying why, at the
  error's status, the message escaped (`DomainErrorMiddleware`); htmx gets the fragment
  alone. A `NotFound` is the site's 404 page instead, the same as for an id that does not
  exist (Http404): no view converts one by hand, and none shows one as a message or in its
  own page. The API has its own mapping (api/exception_handler.py): DRF answers before this.
- A form that posts and redirects (post, redirect, get) shows the error as a message on the
  page it redirects to instead: `with refusal_as_message(request): ...`.
- A form that is shown again with the error beside its fields: `with errors_on_form(form):
  ...` (input errors only; a refusal still gets the error page).
- A page that shows its own error (the annotate workspace, the invitation page) names the
  function that renders it: `@domain_errors_shown_by(render)`; `rerender_status` is the
  status of a form shown again in place.
"""

from collections.abc import Callable
from contextlib import contextmanager
from functools import wraps

from django.contrib import messages
from django.core.handlers.exception import response_for_exception
from django.http import Http404

from core.errors import DomainError, Invalid, NotFound
from core.htmx import render_fragment_or_page

# An input error shown in place, in the form that was posted, answers 422: htmx swaps a 422
# in but not a 400 (the annotate page's responseHandling, templates/annotation/annotate.html).
INVALID_FORM_SHOWN_AGAIN = 422


class DomainErrorMiddleware:
    def __init__(self, get_response):
        self.get_response = get_response

    def __call__(self, request):
        return self.get_response(request)

    def process_exception(self, request, exception):
        if not isinstance(exception, DomainError):
            return None
        if isinstance(exception, NotFound):
            return response_for_exception(request, Http404())
        context = {"error": exception, "status": exception.status}
        return render_fragment_or_page(
            request, "_domain_error.html", "domain_error.html", context, status=exception.status
        )


@contextmanager
def refusal_as_message(request, prefix: str = ""):
    """Run the block; a domain error stops it and becomes an error message (after `prefix`)
    for the next page. Put the success message inside the block, after the service call."""
    try:
        yield
    except NotFound:
        raise
    except DomainError as error:
        messages.error(request, f"{prefix}{error.message}")


@contextmanager
def errors_on_form(form, field: str | None = None):
    """Run the block; an input error (status 400) stops it and goes onto the Django `form`
    (`add_domain_error`), so the view shows the form again. Other errors go on to the error
    page. Put the success answer (a redirect) inside the block."""
    try:
        yield
    except DomainError as error:
        if error.status != Invalid.status:
            raise
        add_domain_error(form, error, field)


def add_domain_error(form, error: DomainError, field: str | None = None) -> None:
    """Each field message beside its field (at the top for a field the form does not have);
    an error that names no field at the top, or beside `field` when given."""
    if not error.fields:
        form.add_error(field, error.message)
        return
    for name, errors in error.fields.items():
        form.add_error(name if name in form.fields else None, _flat(errors))


def _flat(errors) -> list[str]:
    """A field's messages; a nested input's (a dict per key) in one list."""
    if isinstance(errors, dict):
        return [message for nested in errors.values() for message in _flat(nested)]
    return list(errors)


def rerender_status(error: DomainError) -> int:
    """The status of a page that shows the posted form again, in place, with the error."""
    if error.status == Invalid.status:
        return INVALID_FORM_SHOWN_AGAIN
    return error.status


def domain_errors_shown_by(show: Callable) -> Callable:
    """Decorate a view whose page shows its services' errors itself: a `DomainError` from the
    view (but a NotFound, the 404 page) becomes `show(request, error, *args, **kwargs)` (the
    view's own arguments), which answers at `error.status` or `rerender_status(error)`."""

    def decorator(view):
        @wraps(view)
        def wrapped(request, *args, **kwargs):
            try:
                return view(request, *args, **kwargs)
            except NotFound:
                raise
            except DomainError as error:
                return show(request, error, *args, **kwargs)

        return wrapped

    return decorator
