"""Helpers shared by the import_pairs tests."""

import hashlib
import io
import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from django.contrib.auth import get_user_model
from django.core.management import call_command
from django.core.management.base import CommandError

from annotation.models import Assignment, Rating
from content.models import Asset, Generator, Pair, Prompt, Response
from projects.models import Project, Task

RED = (200, 40, 40)
BLUE = (40, 40, 200)
GREEN = (40, 200, 40)


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def run_import(path, *, project="proj", task="t2i", file_format="native", images=None, **extra):
    """Run the command with --json and return its summary."""
    out = io.StringIO()
    options = {"project": project, "task": task, "file_format": file_format, "json": True}
    if images is not None:
        options["images"] = str(images)
    options.update(extra)
    call_command("import_pairs", str(path), stdout=out, **options)
    return json.loads(out.getvalue())


def import_error(path, **kwargs) -> str:
    with pytest.raises(CommandError) as excinfo:
        run_import(path, **kwargs)
    return str(excinfo.value)


def media_files(media_root: Path) -> list[Path]:
    root = Path(media_root)
    return [p for p in root.rglob("*") if p.is_file()] if root.exists() else []


def stored_images(media_root: Path) -> list[Path]:
    """The originals the imports stored (not the cleaned copies made beside them)."""
    return media_files(Path(media_root) / "assets")


def assert_nothing_written(media_root):
    counts = {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }
    assert counts == dict.fromkeys(counts, 0)
    assert not get_user_model().objects.filter(username__startswith="imported-").exists()
    assert media_files(media_root) == []


def table_counts() -> dict:
    return {
        model.__name__: model.objects.count()
        for model in (Project, Task, Pair, Prompt, Response, Asset, Rating, Assignment, Generator)
    }


def mjbench_row(row_id, label, *, image0="a.png", image1="b.png", **extra) -> dict:
    return {
        "id": row_id,
        "caption": f"caption of {row_id}",
        "image0": image0,
        "image1": image1,
        "label": label,
        **extra,
    }


# --------------------------------------------------------------------------- Arbiter export rows


def arbiter_row(row_id, *, ratings=None, scale=7, adjudication=None, **extra) -> dict:
    """A JSONL row as Arbiter exports it (docs/export-format.md), images under images/."""
    ratings = (
        [
            {
                "annotator": "r-0123456789ab",
                "overall": 6,
                "aspects": {"faithfulness": 5},
                "active_seconds": 12.5,
                "rationale": "A is right",
                "imported": False,
            },
            {
                "annotator": "r-ba9876543210",
                "overall": 7,
                "aspects": {"faithfulness": 7, "quality": 6},
                "active_seconds": 3,
                "rationale": "",
                "imported": False,
            },
            {
                "annotator": "2",
                "overall": 6,
                "aspects": {},
                "active_seconds": 0.0,
                "rationale": 'ünïcode \u2028 "quoted"',
                "imported": True,
            },
        ]
        if ratings is None
        else ratings
    )
    scores = [r["overall"] for r in ratings]
    row = {
        "id": row_id,
        "prompt_source": "unit-test",
        "prompt_metadata": {"id": row_id},
        "prompt_content": [["text", "Draw a red square"]],
        "response_a": {"model_name": "gen-1", "response_content": [["image", "images/a.png"]]},
        "response_b": {"model_name": "gen-2", "response_content": [["image", "images/b.png"]]},
        "chosen": "A",
        "human_annotations": scores,
        "scale": scale,
        "task": "t2i",
        "status": "kept",
        "reference_label": "",
        "metadata": {"category": "colour"},
        "ratings": ratings,
        "mean": sum(scores) / len(scores) if scores else None,
        "span": max(scores) - min(scores) if scores else None,
        "decided_by": "consensus",
        "adjudication": adjudication,
        "verdicts": [
            {"judge": "j", "order": "forward", "sample": 0, "choice": "A", "error": ""},
        ],
    }
    row.update(extra)
    return row


def rating(annotator, overall, **extra) -> dict:
    return {
        "annotator": annotator,
        "overall": overall,
        "aspects": {},
        "active_seconds": 1.0,
        "rationale": "",
        **extra,
    }


# --------------------------------------------------------------------------- Parquet files

IMAGE_LIST = pa.list_(pa.struct([("bytes", pa.binary()), ("path", pa.string())]))
HF_SCHEMA = pa.schema(
    [
        ("pair_id", pa.string()),
        ("prompt_text", pa.string()),
        ("prompt_images", IMAGE_LIST),
        ("response_a_text", pa.string()),
        ("response_a_images", IMAGE_LIST),
        ("response_b_text", pa.string()),
        ("response_b_images", IMAGE_LIST),
        ("response_a_model", pa.string()),
        ("response_b_model", pa.string()),
        ("chosen", pa.string()),
        ("human_annotations", pa.string()),
        ("prompt_source", pa.string()),
        ("prompt_metadata", pa.string()),
    ]
)
ARBITER_SCHEMA = pa.schema(
    [
        *HF_SCHEMA,
        ("task", pa.string()),
        ("status", pa.string()),
        ("reference_label", pa.string()),
        ("decided_by", pa.string()),
        ("scale", pa.int16()),
        ("mean", pa.float64()),
        ("span", pa.int16()),
        ("prompt_content", pa.string()),
        ("response_a_content", pa.string()),
        ("response_b_content", pa.string()),
        ("response_a_grades", pa.string()),
        ("response_b_grades", pa.string()),
        ("metadata", pa.string()),
        ("ratings", pa.string()),
        ("adjudication", pa.string()),
        ("verdicts", pa.string()),
    ]
)


def hf_image(data: bytes | None, path: str | None = None) -> dict:
    return {"bytes": data, "path": path}


def write_parquet(path: Path, rows: list[dict], schema: pa.Schema, row_group_size=None) -> Path:
    table = pa.Table.from_pylist(rows, schema=schema)
    pq.write_table(table, path, row_group_size=row_group_size)
    return path


def arbiter_parquet_row(row: dict, images: dict[str, bytes]) -> dict:
    """The Parquet form of an export row; `images` maps each named image to its bytes."""

    def text_of(parts):
        return "\n\n".join(v for k, v in parts or [] if k == "text")

    def images_of(parts):
        return [hf_image(images[v], v) for k, v in parts or [] if k == "image"]

    def dumped(value):
        return json.dumps(value, ensure_ascii=False)

    sides = {side: row[side] for side in ("response_a", "response_b")}
    return {
        "pair_id": row["id"],
        "prompt_text": text_of(row.get("prompt_content")),
        "prompt_images": images_of(row.get("prompt_content")),
        **{f"{s}_text": text_of(v["response_content"]) for s, v in sides.items()},
        **{f"{s}_images": images_of(v["response_content"]) for s, v in sides.items()},
        **{f"{s}_model": v["model_name"] for s, v in sides.items()},
        **{f"{s}_content": dumped(v["response_content"]) for s, v in sides.items()},
        **{f"{s}_grades": dumped(v.get("grades")) for s, v in sides.items()},
        "chosen": row["chosen"],
        "human_annotations": dumped(row["human_annotations"]),
        "prompt_source": row["prompt_source"],
        "prompt_metadata": dumped(row["prompt_metadata"]),
        "task": row.get("task", ""),
        "status": row.get("status", "kept"),
        "reference_label": row.get("reference_label", ""),
        "decided_by": row.get("decided_by", ""),
        "scale": row["scale"],
        "mean": row.get("mean"),
        "span": row.get("span"),
        "prompt_content": dumped(row.get("prompt_content")),
        "metadata": dumped(row.get("metadata", {})),
        "ratings": dumped(row.get("ratings", [])),
        "adjudication": dumped(row.get("adjudication")),
        "verdicts": None,
    }
