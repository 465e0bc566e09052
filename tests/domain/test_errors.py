"""One domain error hierarchy (core/errors.py), mapped to HTTP once for the API
(api/exception_handler.py: Refused → 409 `{"detail"}`, Invalid → 400 with field messages) and
once for the pages (core/page_errors.py: the same statuses, an escaped message)."""

import ast
import re
from pathlib import Path

import pytest
from rest_framework.test import APIClient

from annotation.services.adjudication import AdjudicationRefused, FilterInvalid
from annotation.services.ratings import RatingInvalid
from content.importing.errors import ImportFailed
from core.errors import Invalid, Refused
from judging.models import Judge, JudgeRun
from judging.prompts import TemplateInvalid
from projects.models import Project
from tests.factories import member

pytestmark = [pytest.mark.django_db, pytest.mark.urls("tests.domain.error_urls")]

HTMX = {"HTTP_HX_REQUEST": "true"}
ROOT = Path(__file__).resolve().parents[2]


def api(name: str):
    return APIClient().post(f"/_errors/api/{name}/")


def test_a_refusal_in_an_api_view_is_a_409_with_its_message():
    answer = api("refused")
    assert answer.status_code == 409
    assert answer.json() == {"detail": "run 7 is finished; only a pending or running run stops"}


def test_an_invalid_input_in_an_api_view_is_a_400_with_its_field_errors():
    answer = api("invalid")
    assert answer.status_code == 400
    assert answer.json() == {"samples": ["from 1 to 20"]}  # the shape of a serializer's 400
    whole = api("invalid-whole")
    assert whole.status_code == 400 and whole.json() == {"detail": "upload a .jsonl file"}
    django = api("django")  # a model or service check (django.core.exceptions)
    assert django.status_code == 400 and django.json() == {"name": ["taken"]}


@pytest.mark.parametrize(
    ("name", "status", "body"),
    [
        ("run", 409, {"detail": "run 3 is already running"}),
        ("closed", 409, {"detail": "You skipped this pair; it cannot be rated now."}),
        ("in-use", 409, {"detail": "judge 'j' has runs, verdicts or an ensemble role; it stays"}),
        ("adjudication", 409, {"detail": "Write a note saying why."}),
        ("rating", 400, {"overall": ["must be from 1 to 7"], "aspects": {"x": ["not one"]}}),
        ("filter", 400, {"max_span": ["from 0 to 6"]}),
        ("import", 400, {"detail": "record 2: bad JSON"}),
        ("template", 400, {"body": ["needs {prompt}"]}),
        ("export", 400, {"detail": "project 'p' has no task 'nope'"}),
    ],
)
def test_every_service_error_has_its_place_in_the_hierarchy(name, status, body):
    answer = api(name)
    assert (answer.status_code, answer.json()) == (status, body)


def test_the_older_names_are_subclasses_that_keep_their_attributes():
    failed = ImportFailed("bad JSON", 2)
    assert isinstance(failed, Invalid) and (failed.record, failed.detail) == (2, "bad JSON")
    assert failed.message == str(failed) == "record 2: bad JSON"
    rating = RatingInvalid({"aspect_x": "not one"})
    assert rating.errors == {"aspect_x": "not one"}  # the page's form fields
    assert rating.fields == {"aspects": {"x": ["not one"]}}  # RatingInput's shape, for the API
    filter_invalid = FilterInvalid({"max_span": "from 0 to 6"})
    assert isinstance(filter_invalid, Invalid) and not isinstance(filter_invalid, Refused)
    assert isinstance(TemplateInvalid("x"), ValueError)  # callers that catch ValueError
    assert not isinstance(AdjudicationRefused("x"), Invalid)


@pytest.mark.parametrize(
    ("name", "status", "message"),
    [
        ("refused", 409, "only a pending or running run stops"),
        ("invalid", 400, "samples out of range"),
        ("run", 409, "run 3 is already running"),
        ("export", 400, "project &#x27;p&#x27; has no task &#x27;nope&#x27;"),
    ],
)
def test_a_page_answers_a_domain_error_with_the_same_status_and_its_message(
    client, name, status, message
):
    page = client.post(f"/_errors/page/{name}/")
    body = page.content.decode()
    assert page.status_code == status and "<html" in body and message in body


def test_the_error_page_escapes_the_message_and_htmx_gets_the_fragment(client):
    page = client.post("/_errors/page/hostile/").content.decode()
    assert "<script>alert" not in page and "&lt;script&gt;alert" in page
    fragment = client.post("/_errors/page/hostile/", **HTMX)
    assert fragment.status_code == 409 and "<html" not in fragment.content.decode()
    assert "HX-Request" in fragment["Vary"]


def test_real_endpoints_answer_through_the_mapping():
    project = Project.objects.create(slug="empty", name="Empty")
    lead = member("lead", project, role="lead")
    coin = Judge.objects.create(name="coin", backend="random")
    finished = JudgeRun.objects.create(judge=coin, project=project, trials=2, status="finished")
    client = APIClient()
    client.force_authenticate(lead)
    cancel = client.post(f"/api/runs/{finished.pk}/cancel/")
    assert cancel.status_code == 409
    assert cancel.json() == {
        "detail": f"run {finished.pk} is finished; only a pending or running run stops"
    }
    start = client.post("/api/runs/", {"project": "empty", "judge": coin.pk}, format="json")
    assert start.status_code == 400  # a run that cannot start: the request's choice
    assert start.json() == {"detail": "no pairs to judge in this selection"}


def unmasked(answer) -> str:
    return re.sub(r'name="csrfmiddlewaretoken" value="[^"]+"', "", answer.content.decode())


def test_a_page_answers_a_not_found_error_with_the_sites_404_page(client):
    missing = client.post("/_errors/page/missing/")
    no_such_page = client.get("/no-such-page/")
    assert missing.status_code == no_such_page.status_code == 404
    # The same page but for the form's per-request token: no tell of what was looked for.
    assert unmasked(missing) == unmasked(no_such_page)


VIEW_MODULES = sorted(
    path
    for pattern in ("*/views.py", "*/views/*.py", "*/*_views.py")
    for path in ROOT.glob(pattern)
    if ".venv" not in path.parts and "tests" not in path.parts
)


def _by_hand(tree: ast.AST) -> list[int]:
    """Lines of handlers that turn a model's DoesNotExist, or a NotFound, into a 404 by hand."""
    lines = []
    for handler in ast.walk(tree):
        if not isinstance(handler, ast.ExceptHandler) or handler.type is None:
            continue
        caught = ast.unparse(handler.type)
        raises_404 = any(
            isinstance(node, ast.Raise) and "Http404" in ast.unparse(node)
            for node in ast.walk(handler)
        )
        if "DoesNotExist" in caught or ("NotFound" in caught and raises_404):
            lines.append(handler.lineno)
    return lines


def test_no_view_converts_a_missing_object_to_a_404_by_hand():
    assert len(VIEW_MODULES) > 10
    found = {
        str(path.relative_to(ROOT)): lines
        for path in VIEW_MODULES
        if (lines := _by_hand(ast.parse(path.read_text(encoding="utf-8"))))
    }
    assert found == {}, "services raise a NotFound; core/page_errors.py and the API map it"
