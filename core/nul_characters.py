"""One rule for every page: text sent by a browser never holds a NUL character (U+0000).

No field of Arbiter needs one, and PostgreSQL refuses it in any text column: a NUL that
reached a query or a save answered 500, on every form whose view read `request.POST`
directly (a question, a rationale, a skip or flag note) and on searches. Django's form
`CharField` refuses it on its own, but not every field goes through a form, so the rule lives
here, before any view runs:

- a NUL in a query parameter, a form field (name or value) or an uploaded file's name answers
  400 with the error page saying why (the fragment alone to htmx), and the view never runs, so
  nothing is stored;
- a NUL in the path answers 404, as any page that does not exist;
- the API is left to itself: its serializers and parsers answer the same input with JSON 400s
  (api/serializers, api/parsers.py), and reading a multipart body here would take the parsing,
  and its JSON refusals of bodies too large, away from DRF.

Runs after the CSRF check (a refused token stays a 403) and after django-htmx (the fragment).
"""

from collections.abc import Callable, Iterable

from django.http import Http404, HttpRequest, HttpResponse, QueryDict
from django.utils.translation import gettext
from rest_framework.views import APIView

from core.errors import Invalid
from core.htmx import render_fragment_or_page

NUL = "\x00"


def _holds_nul(data: QueryDict) -> bool:
    return any(NUL in key or any(NUL in value for value in values) for key, values in data.lists())


def _names_hold_nul(names: Iterable[str | None]) -> bool:
    return any(NUL in (name or "") for name in names)


class NulCharacterMiddleware:
    def __init__(self, get_response: Callable[[HttpRequest], HttpResponse]):
        self.get_response = get_response

    def __call__(self, request: HttpRequest) -> HttpResponse:
        return self.get_response(request)

    def process_view(self, request: HttpRequest, view_func, view_args, view_kwargs):
        view_class = getattr(view_func, "cls", None)
        if isinstance(view_class, type) and issubclass(view_class, APIView):
            return None
        if NUL in request.path_info:
            raise Http404("no such page")
        sent_nul = _holds_nul(request.GET)
        if not sent_nul and request.method not in ("GET", "HEAD", "OPTIONS"):
            # Parses form bodies only (urlencoded, multipart), as the CSRF check just did.
            sent_nul = _holds_nul(request.POST) or _names_hold_nul(
                name
                for field, files in request.FILES.lists()
                for name in (field, *(uploaded.name for uploaded in files))
            )
        if not sent_nul:
            return None
        error = Invalid(
            gettext(
                "What you sent holds a NUL character (U+0000), which no text here may "
                "contain; nothing was saved. Remove it (it often comes with text pasted from "
                "a binary file) and send the form again."
            )
        )
        return render_fragment_or_page(
            request,
            "_domain_error.html",
            "domain_error.html",
            {"error": error, "status": error.status},
            status=error.status,
        )
