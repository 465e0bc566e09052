"""Dataset export at MMRB2 scale on PostgreSQL: time and peak memory of `export_dataset`.

usage: python -m bench.export [--postgres URL] [--tasks TASK ...] [--json]

A fresh database `arbiter_bench_export`; the MMRB2 release files (../shared/datasets/mmrb2,
placeholder images) imported with `import_pairs` as in bench.importing, plus the always-A
predictions (8,000 verdicts). Each export runs as its own `manage.py export_dataset` process, so
its peak memory is that process's own high-water mark (ru_maxrss from wait4), Python and Django
start-up included. Memory must be flat: the same peak for 1 set (interleaved, 1,000 pairs) as
for all 4 (4,000 pairs, 14,017 images). Targets for the 4 sets: JSONL < 30 s, Parquet < 60 s.
Exit status 1 when a target is missed. --tasks t2i exports one set for a quick run.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.common import (
    MMRB2,
    MMRB2_TASKS,
    ROOT,
    add_postgres_argument,
    add_tasks_argument,
    django_env,
    fresh_postgres,
    manage,
    placeholder_images,
)

DB_NAME = "arbiter_bench_export"
TARGETS = {"jsonl": 30.0, "parquet": 60.0}  # seconds, for the four sets
FIRST = "interleaved"  # text and images interleaved: the largest rows of the four sets


def measured(env: dict, *args: str) -> dict:
    """Run manage.py in a child process: wall time, its own peak RSS and its stdout."""
    with tempfile.TemporaryFile() as stdout, tempfile.TemporaryFile() as stderr:
        started = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, str(ROOT / "manage.py"), *args],
            env=env,
            cwd=ROOT,
            stdout=stdout,
            stderr=stderr,
        )
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        wall = time.perf_counter() - started
        stdout.seek(0)
        stderr.seek(0)
        if child.returncode != 0:
            sys.exit(f"manage.py {' '.join(args)} failed:\n{stderr.read().decode()}")
        return {"wall_s": wall, "peak_mb": usage.ru_maxrss / 1024, "stdout": stdout.read()}


def folder_bytes(folder: Path) -> int:
    return sum(p.stat().st_size for p in folder.rglob("*") if p.is_file())


def export(env: dict, work: Path, label: str, file_format: str) -> dict:
    out = work / f"{label}-{file_format}"
    run = measured(
        env,
        "export_dataset",
        "--project",
        "mmrb2",
        "--out",
        str(out),
        "--format",
        file_format,
        "--with-verdicts",
        "--json",
    )
    summary = json.loads(run["stdout"])
    return {
        "sets": label,
        "format": file_format,
        "pairs": summary["pairs"],
        "ratings": summary["ratings"],
        "images": summary["images"],
        "export_s": summary["seconds"],
        "wall_s": round(run["wall_s"], 2),
        "peak_mb": round(run["peak_mb"], 1),
        "out_mb": round(folder_bytes(out) / 2**20, 1),
    }


def import_set(env: dict, task: str, images: Path) -> None:
    pairs = str(MMRB2 / f"{task}_response_only.json")
    manage(env, "import_pairs", pairs, "--project", "mmrb2", "--task", task, "--format", "mmrb2",
           "--images", str(images), "--json")  # fmt: skip
    predictions = str(MMRB2 / "outputs" / f"{MMRB2_TASKS[task]}.json")
    manage(env, "import_verdicts", predictions, "--project", "mmrb2", "--task", task,
           "--judge", "always-a", "--json")  # fmt: skip


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    add_tasks_argument(parser)
    parser.add_argument("--json", action="store_true", help="print the rows as JSON")
    args = parser.parse_args()
    if not MMRB2.is_dir():
        print(f"The MMRB2 files are not at {MMRB2}; nothing to measure.")
        return 1
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-export-") as tmp:
        work = Path(tmp)
        images = placeholder_images(work / "images", args.tasks)
        env = django_env(fresh_postgres(args.postgres, DB_NAME), work / "var")
        manage(env, "migrate", "--noinput", "-v0")
        baseline = measured(env, "check")["peak_mb"]  # Python + Django + the apps, no export
        # The set with the largest rows first: "1 set" and "4 sets" then differ in the number
        # of pairs and images only, not in the size of a batch.
        first = FIRST if FIRST in args.tasks else args.tasks[0]
        import_set(env, first, images)
        rows = [export(env, work, "1 set", fmt) for fmt in ("jsonl", "parquet")]
        others = [task for task in dict.fromkeys(args.tasks) if task != first]
        for task in others:
            import_set(env, task, images)
        if others:
            label = f"{len(others) + 1} sets"
            rows += [export(env, work, label, fmt) for fmt in ("jsonl", "parquet")]

    if args.json:
        print(json.dumps({"baseline_peak_mb": round(baseline, 1), "rows": rows}))
    else:
        print("MMRB2 on PostgreSQL, placeholder images, --with-verdicts; one process per export")
        print(f"baseline (manage.py check): peak RSS {baseline:.0f} MB")
        print(
            f"{'sets':7} {'format':8} {'pairs':>6} {'ratings':>8} {'images':>7} "
            f"{'export':>8} {'wall':>8} {'peak RSS':>9} {'output':>8}"
        )
        for row in rows:
            print(
                f"{row['sets']:7} {row['format']:8} {row['pairs']:>6} {row['ratings']:>8} "
                f"{row['images']:>7} {row['export_s']:>6.1f} s {row['wall_s']:>6.1f} s "
                f"{row['peak_mb']:>6.0f} MB {row['out_mb']:>5.0f} MB"
            )
    missed = [
        row for row in rows if row["sets"] == "4 sets" and row["wall_s"] >= TARGETS[row["format"]]
    ]
    for row in missed:
        target = TARGETS[row["format"]]
        print(f"MISSED: {row['format']} export took {row['wall_s']} s (target {target} s)")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
