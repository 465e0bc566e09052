"""Input the API reads strictly, as its schema says: a body is a JSON object on every
operation that takes one (anything else was a 500 on the token endpoint, for anyone), an
empty filter or a malformed page number is a 400 naming the parameter, the judge's schema
says which fields and prices it refuses."""

import json
import re

import pytest
from rest_framework.test import APIClient

from api.serializers.judging import PRICE_PATTERN
from judging.models import Judge
from projects.models import Membership
from tests.api.conftest import token_client

NOT_OBJECTS = [b"true", b"[]", b"null", b"1", b'"x"']


@pytest.fixture
def openapi(db):
    return APIClient().get("/api/schema/?format=json").json()


def _write_operations(openapi) -> list[tuple[str, str, dict]]:
    return [
        (method.upper(), path, operation)
        for path, operations in openapi["paths"].items()
        for method, operation in operations.items()
        if method in ("post", "put", "patch")
    ]


def _url_and_caller(path: str, world):
    """A real URL for the path, and who may reach its body there (a 404 or 403 for the
    object would answer before the body is read)."""
    if path.startswith("/api/auth/"):
        return path, APIClient()
    if path.startswith("/api/assignments/"):
        annotator = token_client(world.ann_a)
        claimed = annotator.post(f"/api/tasks/{world.alpha_task.pk}/claim/").json()
        return path.replace("{id}", str(claimed["assignment"]["id"])), annotator
    ids = {
        "/api/judges/": Judge.objects.get(name="judge-unused").pk,
        "/api/runs/": world.run_a.pk,
        "/api/tasks/": world.alpha_task.pk,
        "/api/projects/{project}/members/": Membership.objects.get(user=world.ann_a).pk,
    }
    real_id = next((pk for prefix, pk in ids.items() if path.startswith(prefix)), None)
    url = path.replace("{project}", "alpha").replace("{id}", str(real_id))
    return url, token_client(world.lead_a)


def test_every_body_that_is_not_a_json_object_is_a_400_saying_so(world, openapi):
    checked = []
    for method, path, operation in _write_operations(openapi):
        media_types = set(operation.get("requestBody", {}).get("content", {}))
        if not media_types:
            continue  # no body: claim, cancel, resume read none
        url, client = _url_and_caller(path, world)
        for body in NOT_OBJECTS:
            answer = client.generic(method, url, body, "application/json")
            if "application/json" in media_types:
                assert answer.status_code == 400, (method, path, body, answer.content)
                detail = answer.json()["detail"]
                assert detail.startswith("JSON parse error - the body must be a JSON object")
            else:  # the imports read multipart forms only
                assert answer.status_code == 415, (method, path, body, answer.content)
            checked.append((method, path))
    assert ("POST", "/api/auth/token/") in checked
    assert len(set(checked)) == 13  # every operation of the schema that reads a body


def test_the_token_endpoint_refuses_a_list_body_without_a_server_error(world):
    client = APIClient()
    client.raise_request_exception = False
    answer = client.post("/api/auth/token/", b"[]", content_type="application/json")
    assert answer.status_code == 400
    assert answer.json() == {
        "detail": "JSON parse error - the body must be a JSON object, not an array"
    }


@pytest.mark.parametrize(
    ("path", "parameter"),
    [
        ("/api/assignments/", "task"),
        ("/api/assignments/", "status"),
        ("/api/pairs/", "task"),
        ("/api/pairs/", "label"),
        ("/api/verdicts/", "project"),
        ("/api/runs/", "status"),
        ("/api/tasks/", "project"),
    ],
)
def test_an_empty_filter_is_a_400_naming_it_not_an_absent_one(world, as_lead, path, parameter):
    answer = as_lead.get(f"{path}?{parameter}=")
    assert answer.status_code == 400
    assert answer.json() == {parameter: ["may not be empty"]}


@pytest.mark.parametrize("value", ["abc", "0", "-1", "1.5", "1e3", "²", "", "9" * 23])
@pytest.mark.parametrize("parameter", ["page", "page_size"])
def test_a_page_number_or_size_that_is_no_whole_number_is_a_400(world, as_lead, parameter, value):
    answer = as_lead.get("/api/pairs/", {parameter: value})
    assert answer.status_code == 400, answer.content
    assert list(answer.json()) == [parameter]


def test_pages_past_the_end_are_404s_and_large_sizes_are_capped(world, as_lead):
    assert as_lead.get("/api/pairs/?page=99").status_code == 404
    assert as_lead.get(f"/api/pairs/?page={2**63 - 1}").status_code == 404
    answer = as_lead.get("/api/pairs/?page_size=100000&page=last")
    assert answer.status_code == 200 and answer.json()["count"] == 6
    assert len(as_lead.get("/api/pairs/?page_size=2").json()["results"]) == 2


def test_the_schema_declares_the_400_of_every_paged_list(openapi):
    for path, operations in openapi["paths"].items():
        operation = operations.get("get", {})
        if any(parameter["name"] == "page" for parameter in operation.get("parameters", [])):
            assert "400" in operation["responses"], path


def test_the_judge_schema_says_unknown_fields_are_refused(world, as_lead, openapi):
    components = openapi["components"]["schemas"]
    for name in ("JudgeInputRequest", "PatchedJudgeInputRequest"):
        assert components[name]["additionalProperties"] is False
    answer = as_lead.post(
        "/api/judges/",
        {"project": "alpha", "name": "j", "backend": "always-a", "colour": "red"},
        format="json",
    )
    assert answer.status_code == 400
    assert answer.json() == {"colour": ["not a judge setting"]}


@pytest.mark.parametrize(
    "price",
    ["", "-", ".", "-0", "-1", "1.", ".5", " 5", "1e2", "1234567", "1.23456", "NaN", "0", "2.5",
     "999999.9999", "000001.0000"],
)  # fmt: skip
def test_the_price_pattern_of_the_schema_is_what_the_api_accepts(world, as_lead, openapi, price):
    schema = openapi["components"]["schemas"]["JudgeInputRequest"]["properties"]
    pattern = schema["price_input_per_mtok"]["pattern"]
    assert pattern == PRICE_PATTERN
    body = {"project": "alpha", "name": "priced", "backend": "always-a"}
    answer = as_lead.post("/api/judges/", {**body, "price_input_per_mtok": price}, format="json")
    accepted = answer.status_code == 201
    assert accepted == bool(re.search(pattern, price)), (price, answer.content)
    if not accepted:
        assert answer.status_code == 400
        assert json.loads(answer.content) == {
            "price_input_per_mtok": [
                "a price in USD per million tokens, e.g. 2.5 (up to 6 digits and 4 decimals)"
            ]
        }
