"""Preference export (exports/preference.py): TRL's preference layout that Hugging Face
`datasets` loads with its images, one row per kept pair with the experts' side, chosen and
rejected the right way round, parts in order, everything left out listed with its reason, and
images without the metadata that names their generator."""

import io
import json
import zipfile

import datasets
import pyarrow.parquet as pq
import pytest
from django.urls import reverse
from PIL import Image

from content.models import Pair
from exports.models import ExportJob
from exports.writer import export_dataset
from imports.services.pair_import import pairs_import
from tests.api.conftest import token_client
from tests.exporting.helpers import by_id, export_job_path, jsonl_rows, manifest_of, run_export
from tests.exporting.test_judge_labels import world  # noqa: F401 (fixture)
from tests.factories import mmrb2_pair, write_image, write_jsonl
from tests.trust.test_image_metadata import assert_clean, dirty  # noqa: F401 (fixture)

pytestmark = pytest.mark.django_db


def _load(folder, *tasks) -> datasets.Dataset:
    """What a TRL user writes: the task files as one training split."""
    files = [str(folder / f"{task}.parquet") for task in tasks]
    return datasets.load_dataset(
        "parquet", data_files={"train": files}, split="train", cache_dir=str(folder.parent / "hf")
    )


def _messages(role, parts):
    content = [
        {"type": "image", "text": None} if kind == "image" else {"type": "text", "text": value}
        for kind, value in parts or []
    ]
    return [{"role": role, "content": content}]


def _with_a_tie(rated, tmp_path) -> str:
    """An imported tie (kept, no side) in the rated project's t2i task; its id."""
    images = tmp_path / "tie-images"
    write_image(images / "a.png")
    write_image(images / "b.png", (40, 40, 200))
    source = write_jsonl(tmp_path / "tie.jsonl", [mmrb2_pair("tie-1", scores=(), chosen="tie")])
    pairs_import(source, project_slug="exp", task_slug="t2i", images_dir=images)
    assert Pair.objects.get(external_id="tie-1").status == Pair.Status.KEPT
    return "tie-1"


def test_one_row_per_kept_pair_with_a_side_and_datasets_loads_it(rated, tmp_path):
    summary = run_export(rated.project, tmp_path / "out", file_format="preference")
    rows = _load(tmp_path / "out", "t2i", "edit")
    kept = Pair.objects.filter(project=rated.project, status=Pair.Status.KEPT, label__in=["A", "B"])
    assert len(kept) >= 4  # the fixture has pairs of both sides in both tasks
    assert sorted(rows["id"]) == sorted(kept.values_list("external_id", flat=True))
    assert summary["pairs"] == len(rows)
    assert rows.column_names[:4] == ["prompt", "chosen", "rejected", "images"]
    assert rows.features["images"].feature == datasets.Image()


def test_chosen_and_rejected_follow_the_label_parts_in_order(rated, tmp_path):
    run_export(rated.project, tmp_path / "j")  # JSONL: the pairs as they are
    run_export(rated.project, tmp_path / "p", file_format="preference")
    for task in ("t2i", "edit"):
        pairs = by_id(jsonl_rows(tmp_path / "j", task))
        rows = _load(tmp_path / "p", task)
        sides = {row["chosen_side"] for row in rows}
        assert sides == {"A", "B"}  # a B-preferred pair is swapped into chosen
        for row in rows:
            pair = pairs[row["id"]]
            assert row["chosen_side"] == pair["chosen"]
            chosen, rejected = (
                (pair["response_a"], pair["response_b"])
                if pair["chosen"] == "A"
                else (pair["response_b"], pair["response_a"])
            )
            assert row["prompt"] == _messages("user", pair["prompt_content"])
            assert row["chosen"] == _messages("assistant", chosen["response_content"])
            assert row["rejected"] == _messages("assistant", rejected["response_content"])
            assert (row["chosen_model"], row["rejected_model"]) == (
                chosen["model_name"],
                rejected["model_name"],
            )
            for column, parts in (
                ("images", pair["prompt_content"]),
                ("chosen_images", chosen["response_content"]),
                ("rejected_images", rejected["response_content"]),
            ):
                # One decoded image per placeholder, in order: the same pixels as the file.
                wanted = [tmp_path / "j" / v for k, v in parts or [] if k == "image"]
                assert len(row[column]) == len(wanted)
                for image, path in zip(row[column], wanted, strict=True):
                    assert isinstance(image, Image.Image)
                    with Image.open(path) as original:
                        assert image.size == original.size
                        assert image.convert("RGB").tobytes() == original.convert("RGB").tobytes()


def test_the_edit_pair_preferring_b_reads_as_a_trainer_expects(rated, tmp_path):
    run_export(rated.project, tmp_path / "p", file_format="preference", task="edit")
    row = next(r for r in _load(tmp_path / "p", "edit") if r["id"] == "edit-2")
    assert row["chosen_side"] == "B"
    assert row["prompt"][0]["content"] == [
        {"type": "text", "text": "Make it yellow"},
        {"type": "image", "text": None},
    ]
    assert [image.size for image in row["images"]] == [(32, 32)]
    assert row["chosen"] == [
        {
            "role": "assistant",
            "content": [{"type": "text", "text": "Here it is"}, {"type": "image", "text": None}],
        }
    ]
    assert row["rejected"] == [{"role": "assistant", "content": [{"type": "image", "text": None}]}]
    assert [image.size for image in row["rejected_images"]] == [(20, 10)]  # the shared image
    assert (row["chosen_model"], row["rejected_model"]) == ("gen-y", "gen-x")


def test_ties_dropped_and_undecided_pairs_are_listed_with_their_reason(rated, tmp_path):
    tie = _with_a_tie(rated, tmp_path)
    queued = Pair.objects.filter(task=rated.task).order_by("id").last()
    undecided = Pair.objects.create(
        project=rated.project,
        task=rated.task,
        external_id="still-open",
        prompt=queued.prompt,
        response_a=queued.response_a,
        response_b=queued.response_b,
        status=Pair.Status.QUEUED,
    )
    dropped = Pair.objects.filter(task=rated.task, status=Pair.Status.DROPPED)
    assert dropped.exists()
    out = tmp_path / "out"
    summary = run_export(rated.project, out, file_format="preference", include_dropped=True)
    ids = set(_load(out, "t2i")["id"])
    manifest = manifest_of(out)
    left_out = manifest["left_out"]["t2i"]
    assert left_out == {
        "dropped": sorted(dropped.values_list("external_id", flat=True)),
        "tie": [tie],
        "undecided": [undecided.external_id],
    }
    assert not ids & {tie, undecided.external_id, *left_out["dropped"]}
    counts = {reason: len(pair_ids) for reason, pair_ids in left_out.items()}
    assert summary["tasks"]["t2i"]["left_out"] == counts
    assert manifest["counts"]["left_out"] == counts  # the edit task leaves nothing out
    assert manifest["left_out"]["edit"] == {}
    assert manifest["counts"]["pairs"] == len(ids) + len(_load(out, "edit"))


def test_judge_labelled_pairs_stay_out_even_when_the_project_exports_them(world, tmp_path):  # noqa: F811
    project, _truth = world
    export_dataset(project, tmp_path / "j")
    labelled = [
        json.loads(line)
        for line in (tmp_path / "j" / "t2i.jsonl").read_text().splitlines()
        if json.loads(line)["label_source"].startswith("judges")
    ]
    assert labelled  # the JSONL export does carry judge labels for this project
    export_dataset(project, tmp_path / "p", file_format="preference")
    rows = _load(tmp_path / "p", "t2i")
    kept = set(
        Pair.objects.filter(project=project, status="kept").values_list("external_id", flat=True)
    )
    assert set(rows["id"]) == kept
    manifest = manifest_of(tmp_path / "p")
    assert {row["id"] for row in labelled} <= set(manifest["left_out"]["t2i"]["undecided"])
    assert manifest["judge_labels"] == {}  # no calibration either: none of it is used


def test_images_carry_no_metadata(dirty, tmp_path):  # noqa: F811
    project, originals, _annotator, _lead = dirty
    Pair.objects.filter(project=project).update(status=Pair.Status.KEPT, label="B")
    out = tmp_path / "out"
    run_export(project, out, file_format="preference")
    table = pq.read_table(out / "t2i.parquet").to_pylist()
    images = [image for row in table for column in ("chosen_images", "rejected_images")
              for image in row[column]]  # fmt: skip
    assert len(images) == 2
    for image in images:
        assert_clean(image["bytes"])
        digest = image["path"].removeprefix("images/").split(".")[0]
        assert digest not in originals.values()  # named by the bytes shipped, not the original
    for row in _load(out, "t2i"):
        for image in (*row["chosen_images"], *row["rejected_images"]):
            assert not image.getexif()
            assert not {"parameters", "Description", "Comment", "XML:com.adobe.xmp"} & set(
                image.info
            )


def test_the_api_and_a_job_export_the_preference_format(
    rated, django_capture_on_commit_callbacks, tmp_path
):
    client = token_client(rated.lead)
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            f"/api/projects/{rated.project.slug}/exports/", {"format": "preference"}, format="json"
        )
    assert answer.status_code == 202, answer.content
    job = ExportJob.objects.get(pk=answer.json()["id"])
    assert (job.file_format, job.status) == ("preference", "done")
    with zipfile.ZipFile(export_job_path(job)) as zipped:
        names = set(zipped.namelist())
        manifest = json.loads(zipped.read("manifest.json"))
        rows = pq.read_table(io.BytesIO(zipped.read("t2i.parquet")))
    assert {"manifest.json", "t2i.parquet", "edit.parquet"} <= names
    assert manifest["file_format"] == "preference"
    pairs = {task["slug"]: task["pairs"] for task in manifest["tasks"]}
    assert rows.num_rows == pairs["t2i"] == job.summary["pairs"] - pairs["edit"]


def test_the_documented_text_only_flattening_gives_plain_strings(rated, tmp_path):
    """docs/export-format.md's map for text-only chat templates."""
    run_export(rated.project, tmp_path / "p", file_format="preference", task="edit")
    train = _load(tmp_path / "p", "edit")
    flat = train.map(
        lambda r: {
            k: [
                {"role": m["role"], "content": "".join(c["text"] or "" for c in m["content"])}
                for m in r[k]
            ]
            for k in ("prompt", "chosen", "rejected")
        }
    )
    row = next(r for r in flat if r["id"] == "edit-2")
    assert row["prompt"] == [{"role": "user", "content": "Make it yellow"}]
    assert row["chosen"] == [{"role": "assistant", "content": "Here it is"}]


def test_the_overview_form_offers_and_starts_a_preference_export(
    rated, client, django_capture_on_commit_callbacks
):
    client.force_login(rated.lead)
    page = client.get(reverse("dash-overview", args=[rated.project.slug]))
    assert b'<option value="preference">' in page.content
    with django_capture_on_commit_callbacks(execute=True):
        answer = client.post(
            reverse("dash-export-start", args=[rated.project.slug]), {"format": "preference"}
        )
    assert answer.status_code == 302
    job = ExportJob.objects.get(project=rated.project)
    assert (job.file_format, job.status) == ("preference", "done")
