"""Hostile uploads, each imported in a child process whose peak
memory (VmHWM) is read when it ends: a 21 MB MMRB2 file of empty lists, 7 million `{}` lines,
and a 23 MB prediction file of ids the project does not know. Before records were streamed
each peaked at 450-650 MB (the whole file parsed before its first record was checked); now
the first record is refused as it is read. (A prediction file read to its end, with
strict_mmrb2 skipping every unknown id, peaks at ~86 MB: measured by hand, too slow for CI.)

And a file of valid pairs: 20,000 text-only pairs of 1 KB answers (48 MB) peaked at 232 MB when
the importer held every checked record until it wrote them; written a batch at a time, at
~110 MB. The test imports the same 48 MB as 10,000 pairs of 2 KB answers (~117 MB): half the
rows to write, the same bytes to hold.

The child's time limit only ends a hung import: on a loaded machine a sound one takes
minutes."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.db import connection

from projects.models import Project, Task

# A Django process that imported the importer is ~70 MB; a bound far below the old figures.
PEAK_BOUND_MB = 200
CHILD = """
import json, os, sys, time
import django
django.setup()
from content.importing.errors import ImportFailed
from imports.services.pair_upload import pairs_import_stored
from judging.services.verdict_import import verdicts_import

kind, path = sys.argv[1], sys.argv[2]
started = time.perf_counter()
try:
    if kind.startswith("verdicts"):
        outcome = verdicts_import(
            path, project_slug="mem", task_slug="t", judge_name="ext",
            strict_mmrb2=kind == "verdicts-strict",
        )["skipped_unknown_ids"]
    else:
        outcome = pairs_import_stored(
            __import__("pathlib").Path(path), project_slug="mem", task_slug="t",
            file_format=kind,
        ).records
except ImportFailed as refused:
    outcome = str(refused)[:200]
seconds = time.perf_counter() - started
status = open("/proc/self/status").read()
peak_kb = int(status.split("VmHWM:")[1].split()[0])
print(json.dumps({"peak_mb": peak_kb / 1024, "seconds": seconds, "outcome": outcome}))
"""


def _this_database_url() -> str:
    """The test database, for the child process (SQLite's file, or PostgreSQL's test_*)."""
    db = connection.settings_dict
    if connection.vendor == "postgresql":
        host, port = db["HOST"] or "127.0.0.1", db["PORT"] or 5432
        return f"postgres://{db['USER']}@{host}:{port}/{db['NAME']}"
    return f"sqlite:///{db['NAME']}"


def import_in_child(kind: str, path: Path) -> dict:
    env = dict(os.environ)
    env.pop("REDIS_URL", None)
    env["DATABASE_URL"] = _this_database_url()
    env["SECRET_KEY"] = "memory-test-key"
    env["DJANGO_SETTINGS_MODULE"] = "config.settings"
    done = subprocess.run(
        [sys.executable, "-c", CHILD, kind, str(path)],
        capture_output=True,
        text=True,
        env=env,
        cwd=Path(__file__).resolve().parents[2],
        timeout=900,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout.strip().splitlines()[-1])


@pytest.fixture
def target(db):
    project = Project.objects.create(slug="mem", name="mem")
    Task.objects.create(project=project, slug="t", name="t")


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
@pytest.mark.django_db(transaction=True)  # the child process reads the committed project
def test_hostile_uploads_peak_far_below_their_old_memory(tmp_path, target):
    mmrb2 = tmp_path / "pairs.json"
    mmrb2.write_bytes(b'{"pairs":[' + b"[]," * 7_000_000 + b"[]]}")  # 21 MB
    jsonl = tmp_path / "pairs.jsonl"
    jsonl.write_bytes(b"{}\n" * 7_000_000)  # 21 MB
    predictions = tmp_path / "predictions.json"
    entries = ",".join(f'"x{number:07d}":{{}}' for number in range(1_640_000))
    predictions.write_text("{" + entries + "}")  # 23 MB
    figures = {
        "mmrb2": import_in_child("mmrb2", mmrb2),
        "native": import_in_child("native", jsonl),
        "verdicts": import_in_child("verdicts", predictions),
    }
    print(json.dumps(figures))  # the figures SECURITY.md quotes (pytest -s)
    assert "record 1: a pair must be a JSON object" in figures["mmrb2"]["outcome"]
    assert "record 1: missing field 'id'" in figures["native"]["outcome"]
    assert "record 1: pair id 'x0000000' is unknown" in figures["verdicts"]["outcome"]
    for kind, figure in figures.items():
        assert figure["peak_mb"] < PEAK_BOUND_MB, (kind, figure)


VALID_PAIRS = 10_000
VALID_PEAK_BOUND_MB = 140  # ~117 MB measured; 232 MB when every record was held


def _valid_text_pairs(path: Path, count: int) -> Path:
    """`count` valid text-only pairs (two answers of 2 KB each, no images), as JSONL."""
    with path.open("w") as file:
        for number in range(count):
            answer = f"answer {number} " + "lorem ipsum " * 170
            record = {
                "id": f"p{number:06d}",
                "prompt_source": "memory",
                "prompt_metadata": {"n": number},
                "prompt_content": [["text", f"prompt {number}"]],
                "response_a": {"model_name": "gen-1", "response_content": [["text", answer]]},
                "response_b": {"model_name": "gen-2", "response_content": [["text", answer[::-1]]]},
                "chosen": "A",
                "human_annotations": [],
            }
            file.write(json.dumps(record) + "\n")
    return path


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's VmHWM")
@pytest.mark.django_db(transaction=True)
def test_an_import_of_many_valid_pairs_peaks_at_a_bound_not_growing_with_the_file(tmp_path, target):
    figure = import_in_child("native", _valid_text_pairs(tmp_path / "valid.jsonl", VALID_PAIRS))
    print(json.dumps(figure))  # the figure the docstring quotes (pytest -s)
    assert figure["outcome"] == VALID_PAIRS
    assert figure["peak_mb"] < VALID_PEAK_BOUND_MB, figure
