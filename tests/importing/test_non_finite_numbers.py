"""Numbers no JSON column stores (NaN, -Infinity, 1e400 read as infinity) are refused by every
importer with a 400 naming the record, and nothing is written (they once
reached the database, whose JSON check answered a 500)."""

import io
import json

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.core.files.uploadedfile import SimpleUploadedFile

from content.models import Pair
from judging.models import Verdict
from projects.models import Membership
from tests.api.conftest import token_client
from tests.factories import image_bytes, member, queued_pairs
from tests.importing.helpers import HF_SCHEMA, hf_image

pytestmark = pytest.mark.django_db
NON_FINITE = ("NaN", "-Infinity", "1e400")


@pytest.fixture
def as_lead(tmp_path):
    """The lead of project `alpha` (task t2i, one pair), with a token; server errors come back
    as responses, as a client would see them."""
    task = queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=1)
    client = token_client(member("lead_a", task.project, role=Membership.Role.LEAD))
    client.raise_request_exception = False
    return client


def post_pairs(client, name: str, content: bytes, file_format: str):
    upload = SimpleUploadedFile(name, content)
    return client.post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": file_format, "file": upload},
        format="multipart",
    )


def text_pair(pair_id: str) -> dict:
    return {
        "id": pair_id,
        "prompt_content": [["text", "a prompt"]],
        "response_a": {"model_name": "gen-1", "response_content": [["text", "A"]]},
        "response_b": {"model_name": "gen-2", "response_content": [["text", "B"]]},
    }


def with_number(obj: dict, field: str, number: str) -> str:
    """The pair as JSON text with `field` holding {"x": number} as written."""
    return json.dumps({**obj, field: {"x": "PLACE"}}).replace('"PLACE"', number)


@pytest.mark.parametrize("number", NON_FINITE)
@pytest.mark.parametrize("field", ["metadata", "prompt_metadata"])
def test_a_jsonl_record_with_a_non_finite_number_is_a_400_naming_it(as_lead, field, number):
    lines = [json.dumps(text_pair("fine")), with_number(text_pair("bad"), field, number)]
    answer = post_pairs(as_lead, "p.jsonl", "\n".join(lines).encode(), "native")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith(f"record 2: {field}.x=")
    assert "must be a finite number" in answer.json()["detail"]
    assert not Pair.objects.filter(external_id__in=["fine", "bad"]).exists()


@pytest.mark.parametrize("number", NON_FINITE)
def test_an_mmrb2_pair_with_a_non_finite_number_is_a_400_naming_it(as_lead, number):
    body = '{"pairs": [' + with_number(text_pair("bad"), "prompt_metadata", number) + "]}"
    answer = post_pairs(as_lead, "p.json", body.encode(), "mmrb2")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("record 1: prompt_metadata.x=")
    assert not Pair.objects.filter(external_id="bad").exists()


@pytest.mark.parametrize("number", NON_FINITE)
def test_an_mjbench_row_with_a_non_finite_number_is_a_400_naming_it(as_lead, number):
    row = json.dumps({"caption": "c", "image0": "a.png", "image1": "b.png", "label": 0, "x": 0})
    answer = post_pairs(
        as_lead, "p.json", f"[{row.replace('0}', number + '}')}]".encode(), "mjbench"
    )
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("record 1: x=")
    assert "must be a finite number" in answer.json()["detail"]


@pytest.mark.parametrize("value", [float("nan"), float("-inf")])
def test_a_parquet_row_with_a_non_finite_number_is_a_400_naming_it(as_lead, value):
    """A JSON column and a float of a struct column: Parquet carries both as they are."""
    row = {
        "pair_id": "bad",
        "prompt_text": "Draw a cat",
        "prompt_images": [],
        "response_a_text": "",
        "response_a_images": [hf_image(image_bytes((200, 40, 40)), "a.png")],
        "response_b_text": "",
        "response_b_images": [hf_image(image_bytes((40, 40, 200)), "b.png")],
        "response_a_model": "gen-1",
        "response_b_model": "gen-2",
        "chosen": "A",
        "human_annotations": "[5, 6, 5]",
        "prompt_source": "hf-test",
        "prompt_metadata": json.dumps({"x": value}),  # NaN / -Infinity as Python writes them
    }
    buffer = io.BytesIO()
    pq.write_table(pa.Table.from_pylist([row], schema=HF_SCHEMA), buffer)
    answer = post_pairs(as_lead, "p.parquet", buffer.getvalue(), "parquet")
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("record 1: prompt_metadata.x=")
    assert not Pair.objects.filter(external_id="bad").exists()


@pytest.mark.parametrize("number", NON_FINITE)
def test_a_prediction_with_a_non_finite_number_is_a_400_naming_it(as_lead, number):
    pair_id = Pair.objects.get().external_id
    body = f'{{"{pair_id}": {{"forward": [{{"judgement": "A", "confidence": {number}}}]}}}}'
    answer = as_lead.post(
        "/api/verdicts/import/",
        {"project": "alpha", "task": "t2i", "judge": "ext", "file": SimpleUploadedFile(
            "predictions.json", body.encode())},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 400
    assert answer.json()["detail"].startswith("record 1: ")
    assert "confidence=" in answer.json()["detail"]
    assert "must be a finite number" in answer.json()["detail"]
    assert not Verdict.objects.exists()
