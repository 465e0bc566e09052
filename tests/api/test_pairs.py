"""Pairs for their leads: filters, the un-blinded detail, bulk import."""

import io
import json
import zipfile

from django.core.files.uploadedfile import SimpleUploadedFile

from annotation.models import Rating
from content.models import Pair
from tests.factories import image_bytes, mmrb2_pair


def test_list_and_filters(world, as_lead):
    listed = as_lead.get("/api/pairs/").json()
    assert listed["count"] == 6
    assert {p["task_slug"] for p in listed["results"]} == {"t2i"}
    assert as_lead.get("/api/pairs/?status=in_progress").json()["count"] == 1
    assert as_lead.get("/api/pairs/?status=queued&task=t2i&source=unit").json()["count"] == 5
    assert as_lead.get("/api/pairs/?task=edit").json()["count"] == 0
    assert as_lead.get("/api/pairs/?project=beta").json()["count"] == 0
    assert as_lead.get("/api/pairs/?project=alpha&label=none&decided_by=none").json()["count"] == 6
    Pair.objects.filter(pk=listed["results"][0]["id"]).update(label="A", decided_by="imported")
    assert as_lead.get("/api/pairs/?label=A&decided_by=imported").json()["count"] == 1
    bad = as_lead.get("/api/pairs/?status=shiny&label=C")
    assert bad.status_code == 400 and set(bad.json()) == {"status", "label"}


def test_detail_is_unblinded_with_ratings(world, as_lead):
    rated = Pair.objects.get(project=world.alpha, rating_count=1)
    detail = as_lead.get(f"/api/pairs/{rated.pk}/").json()
    assert detail["external_id"] == rated.external_id
    assert detail["response_a"]["model_name"] == "secretmodelA"
    image = next(p for p in detail["response_a"]["content"] if p["type"] == "image")["image"]
    assert image["url"].endswith(f"/api/assets/{image['sha256']}/") and image["width"] == 40
    assert detail["prompt"]["content"][0]["text"].startswith("Draw scene number")
    ratings = detail["ratings"]
    assert ratings["count"] == 1 and ratings["needed"] == 3 and ratings["span"] == 0
    assert ratings["ratings"][0]["annotator"] == "ann_a2"
    stored = Rating.objects.get(pair=rated)  # canonical, whatever side A was shown on
    assert ratings["ratings"][0]["overall"] == ratings["mean"] == stored.overall
    assert detail["adjudications"] == []


def _text_pair(pair_id):
    record = mmrb2_pair(pair_id, scores=())
    for side in ("response_a", "response_b"):
        record[side]["response_content"] = [["text", f"{side} of {pair_id}"]]
    del record["chosen"], record["human_annotations"]
    return record


def test_import_a_jsonl_file(world, as_lead):
    lines = "".join(json.dumps(_text_pair(f"api-{i}")) + "\n" for i in range(3))
    upload = SimpleUploadedFile("pairs.jsonl", lines.encode())
    answer = as_lead.post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": "native", "file": upload},
        format="multipart",
    )
    assert answer.status_code == 201, answer.content
    summary = answer.json()
    assert summary["pairs"] == 3 and summary["records"] == 3 and summary["task"] == "t2i"
    assert Pair.objects.filter(project=world.alpha, external_id__startswith="api-").count() == 3


def test_import_a_zip_with_images(world, as_lead):
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as zipped:
        record = mmrb2_pair("zip-1")
        del record["human_annotations"]  # MMRB2 scores are on 6 points, alpha rates on 7
        zipped.writestr("pairs.json", json.dumps({"pairs": [record]}))
        zipped.writestr("a.png", image_bytes((1, 2, 3)))
        zipped.writestr("b.png", image_bytes((4, 5, 6)))
    upload = SimpleUploadedFile("pairs.zip", archive.getvalue())
    answer = as_lead.post(
        "/api/pairs/import/",
        {"project": world.alpha.pk, "task": "edit", "format": "mmrb2", "file": upload,
         "as_candidates": "true"},
        format="multipart",
    )  # fmt: skip
    assert answer.status_code == 201, answer.content
    assert answer.json()["images"]["new"] == 2
    assert Pair.objects.get(external_id="zip-1").task.slug == "edit"


def test_a_bad_file_is_a_400_with_the_importer_message(world, as_lead):
    upload = SimpleUploadedFile("pairs.jsonl", b'{"id": "x"}\nnot json\n')
    answer = as_lead.post(
        "/api/pairs/import/",
        {"project": "alpha", "task": "t2i", "format": "native", "file": upload},
        format="multipart",
    )
    assert answer.status_code == 400
    assert "record 1" in answer.json()["detail"]
    missing = as_lead.post("/api/pairs/import/", {"project": "alpha"}, format="multipart")
    assert missing.status_code == 400 and {"task", "file"} <= set(missing.json())
    assert not Pair.objects.filter(external_id="x").exists()


def test_import_only_into_projects_you_lead(world, as_annotator):
    for client, project in ((as_annotator, "alpha"), (as_annotator, "beta")):
        upload = SimpleUploadedFile("pairs.jsonl", json.dumps(_text_pair("sneaky")).encode())
        answer = client.post(
            "/api/pairs/import/",
            {"project": project, "task": "t2i", "file": upload},
            format="multipart",
        )
        assert answer.status_code == 404
    assert not Pair.objects.filter(external_id="sneaky").exists()
