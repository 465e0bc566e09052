"""Views that only raise, for tests/domain/test_errors.py: the API's and the pages' one mapping
of domain errors, seen through the whole request stack (middleware, DRF, renderers)."""

from django.core.exceptions import ValidationError
from django.urls import path
from rest_framework.permissions import AllowAny
from rest_framework.views import APIView

from annotation.services.adjudication import AdjudicationRefused, FilterInvalid
from annotation.services.assignments import AssignmentClosed, AssignmentNotFound
from annotation.services.ratings import RatingInvalid
from config.urls import urlpatterns as site_urls
from content.importing.errors import ImportFailed
from core.errors import Invalid, Refused
from exports.errors import ExportInvalid
from judging.prompts import TemplateInvalid
from judging.services.judges import JudgeInUse
from judging.services.runs import RunRefused

ERRORS = {
    "refused": lambda: Refused("run 7 is finished; only a pending or running run stops"),
    "invalid": lambda: Invalid("samples out of range", {"samples": ["from 1 to 20"]}),
    "invalid-whole": lambda: Invalid("upload a .jsonl file"),
    "hostile": lambda: Refused('<script>alert("x")</script> & more'),
    "django": lambda: ValidationError({"name": ["taken"]}),
    "run": lambda: RunRefused("run 3 is already running"),
    "closed": lambda: AssignmentClosed("You skipped this pair; it cannot be rated now."),
    "in-use": lambda: JudgeInUse("judge 'j' has runs, verdicts or an ensemble role; it stays"),
    "adjudication": lambda: AdjudicationRefused("Write a note saying why."),
    "rating": lambda: RatingInvalid({"overall": "must be from 1 to 7", "aspect_x": "not one"}),
    "filter": lambda: FilterInvalid({"max_span": "from 0 to 6"}),
    "import": lambda: ImportFailed("bad JSON", 2),
    "template": lambda: TemplateInvalid("needs {prompt}", {"body": ["needs {prompt}"]}),
    "export": lambda: ExportInvalid("project 'p' has no task 'nope'"),
    "missing": lambda: AssignmentNotFound("No such assignment."),
}


class Raising(APIView):
    permission_classes = [AllowAny]

    def post(self, request, name):
        raise ERRORS[name]()


def raising_page(request, name):
    raise ERRORS[name]()


urlpatterns = [
    path("_errors/api/<str:name>/", Raising.as_view()),
    path("_errors/page/<str:name>/", raising_page),
    *site_urls,
]
