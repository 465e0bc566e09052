"""Hostile bodies on the API's import endpoints answer 4xx with a JSON message, never a 500:
deeply nested JSON (as the uploaded file or as the body), texts above ARBITER_MAX_TEXT_CHARS,
Parquet bombs, bodies above DATA_UPLOAD_MAX_MEMORY_SIZE. The JSON parser meant for every
endpoint (api/parsers.py) is checked on a view of its own."""

import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile
from rest_framework.response import Response
from rest_framework.test import APIRequestFactory
from rest_framework.views import APIView

from api.parsers import JSONParser
from content.models import Pair
from judging.models import Verdict
from projects.models import Membership
from tests.api.conftest import token_client
from tests.factories import member, queued_pairs
from tests.importing.helpers import HF_SCHEMA

DEEP = "[" * 100_000


@pytest.fixture
def as_lead(db, tmp_path):
    """The lead of project `alpha` (task t2i, two pairs), with a token; server errors are
    answered as responses, as a client would see them."""
    task = queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=2)
    client = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    client.raise_request_exception = False
    return client


def post_pairs(client, name: str, content: bytes, file_format="native"):
    upload = SimpleUploadedFile(name, content)
    return client.post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": file_format, "file": upload},
        format="multipart",
    )


def text_pair(pair_id: str, text: str = "short") -> dict:
    return {
        "id": pair_id,
        "prompt_content": [["text", "a prompt"]],
        "response_a": {"model_name": "gen-1", "response_content": [["text", text]]},
        "response_b": {"model_name": "gen-2", "response_content": [["text", "B"]]},
    }


def test_deep_json_files_are_400s(as_lead):
    answer = post_pairs(as_lead, "p.jsonl", (json.dumps(text_pair("a")) + "\n" + DEEP).encode())
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        "record 2: JSON nested deeper than 64 levels (at line 1 column 65); refused before parsing"
    )
    answer = post_pairs(as_lead, "p.json", b'{"pairs": ' + DEEP.encode(), "mmrb2")
    assert answer.status_code == 400 and "nested deeper than 64" in answer.json()["detail"]
    upload = SimpleUploadedFile("predictions.json", ('{"x": ' + DEEP).encode())
    answer = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "ext", "file": upload},
        format="multipart",
    )
    assert answer.status_code == 400
    assert "predictions.json: JSON nested deeper than 64 levels" in answer.json()["detail"]
    assert not Pair.objects.filter(external_id="a").exists()
    assert not Verdict.objects.exists()


def test_long_text_is_a_400_naming_the_record(as_lead, settings):
    settings.ARBITER_MAX_TEXT_CHARS = 100
    lines = json.dumps(text_pair("a")) + "\n" + json.dumps(text_pair("b", "w" * 101)) + "\n"
    answer = post_pairs(as_lead, "p.jsonl", lines.encode())
    assert answer.status_code == 400
    assert answer.json()["detail"] == (
        "record 2: response_a.response_content[0][1] (id 'b') is 101 characters long, above "
        "the 100 characters limit (ARBITER_MAX_TEXT_CHARS)"
    )
    assert not Pair.objects.filter(external_id__in=["a", "b"]).exists()


def test_a_parquet_bomb_is_a_400(as_lead, tmp_path):
    row = {name: None for name in HF_SCHEMA.names}
    row.update(pair_id="p1", prompt_text="x" * 10_000_000, chosen="A", human_annotations="[]")
    row.update(response_a_model="m", response_b_model="m")
    path = tmp_path / "bomb.parquet"
    pq.write_table(pa.Table.from_pylist([row], schema=HF_SCHEMA), path, compression="zstd")
    answer = post_pairs(as_lead, "bomb.parquet", path.read_bytes(), "parquet")
    assert answer.status_code == 400
    assert "a Parquet bomb?" in answer.json()["detail"]
    assert not Pair.objects.filter(external_id="p1").exists()


@pytest.mark.parametrize("url", ["/api/pairs/import/", "/api/verdicts/import/"])
def test_json_bodies_on_the_import_endpoints_are_refused_unparsed(as_lead, url):
    """The imports take a multipart upload; a JSON body, deep or 3 MB, is never parsed."""
    big = json.dumps({"project": "alpha", "task": "t2i", "file": "a" * 3_000_000})
    for body in (DEEP, big):
        answer = as_lead.generic("POST", url, body.encode(), "application/json")
        assert answer.status_code == 415
        assert answer.json() == {"detail": 'Unsupported media type "application/json" in request.'}


@pytest.mark.parametrize("url", ["/api/pairs/import/", "/api/verdicts/import/"])
def test_oversized_form_fields_are_a_413_with_a_message(as_lead, url):
    fields = {"project": "alpha", "task": "t2i", "judge": "j", "note": "a" * 3_000_000}
    answer = as_lead.post(url, fields, format="multipart")
    assert answer.status_code == 413
    assert answer.json()["detail"].startswith(
        "the form fields of the body are larger than 2621440 bytes (DATA_UPLOAD_MAX_MEMORY_SIZE)"
    )
    answer = as_lead.generic(  # Django's own refusal (request.body), a 400
        "POST", url, b"a=" + b"b" * 3_000_000, "application/x-www-form-urlencoded"
    )
    assert answer.status_code == 400


class _Echo(APIView):
    authentication_classes = []
    permission_classes = []
    parser_classes = [JSONParser]

    def post(self, request):
        return Response({"keys": sorted(request.data)})


@pytest.mark.parametrize(
    ("body", "status", "detail"),
    [
        (b'{"a": [1, {"b": 2}]}', 200, None),
        (DEEP.encode(), 400, "JSON parse error - JSON nested deeper than 64 levels (at line 1"),
        (b"{not json", 400, "JSON parse error - Expecting property name"),
    ],
)
def test_the_json_parser_checks_the_depth_first(body, status, detail):
    request = APIRequestFactory().generic("POST", "/", body, "application/json")
    answer = _Echo.as_view()(request)
    assert answer.status_code == status
    if detail is None:
        assert answer.data == {"keys": ["a"]}
    else:
        assert str(answer.data["detail"]).startswith(detail)
