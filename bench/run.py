#!/usr/bin/env python
"""Benchmarks on real MMRB2 data: import of the four release files (4,000 pairs, 14,017
images) and `report --json`, on SQLite and, when reachable, PostgreSQL.

usage: python bench/run.py [--postgres URL] [--skip-postgres]
Each step runs as its own `manage.py` process against a fresh database, so the figures include
Python start-up, as a user would see them. Needs ../shared/datasets/mmrb2 beside the checkout.
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.database import fresh_postgres  # noqa: E402

MMRB2 = ROOT.parent / "shared" / "datasets" / "mmrb2"
TASKS = {
    "t2i": "sample_task1_image",
    "edit": "sample_task2_edit",
    "interleaved": "sample_task3_interleaved",
    "reasoning": "sample_task4_reasoning",
}


def placeholder_images(folder: Path) -> Path:
    """A small labelled JPEG for every file the MMRB2 sets name (their own script)."""
    script = MMRB2 / "make_placeholder_images.py"
    subprocess.run([sys.executable, str(script), str(folder)], check=True, capture_output=True)
    return folder


def manage(env: dict, *args: str) -> tuple[float, str]:
    started = time.perf_counter()
    done = subprocess.run(
        [sys.executable, str(ROOT / "manage.py"), *args],
        env=env,
        cwd=ROOT,
        capture_output=True,
        text=True,
    )
    elapsed = time.perf_counter() - started
    if done.returncode != 0:
        sys.exit(f"manage.py {' '.join(args)} failed:\n{done.stderr}")
    return elapsed, done.stdout


def bench_backend(name: str, database_url: str, images: Path, work: Path) -> dict:
    env = {**os.environ, "DATABASE_URL": database_url, "ARBITER_VAR_DIR": str(work / name)}
    env.pop("REDIS_URL", None)
    env["MEDIA_ROOT"] = str(work / name / "media")
    manage(env, "migrate", "--noinput", "-v0")
    import_seconds = 0.0
    for task in TASKS:
        seconds, _ = manage(
            env,
            "import_pairs",
            str(MMRB2 / f"{task}_response_only.json"),
            "--project",
            "mmrb2",
            "--task",
            task,
            "--format",
            "mmrb2",
            "--images",
            str(images),
            "--json",
        )
        import_seconds += seconds
    verdict_seconds = 0.0
    for task, outputs in TASKS.items():
        seconds, _ = manage(
            env,
            "import_verdicts",
            str(MMRB2 / "outputs" / f"{outputs}.json"),
            "--project",
            "mmrb2",
            "--task",
            task,
            "--judge",
            "always-a",
            "--json",
        )
        verdict_seconds += seconds
    report_seconds, output = manage(env, "report", "--project", "mmrb2", "--json")
    report = json.loads(output)
    accuracies = {t: report["tasks"][t]["judges"]["always-a"]["accuracy"] for t in TASKS}
    kept = sum(report["tasks"][t]["kept"] for t in TASKS)
    return {
        "backend": name,
        "import_pairs_s": round(import_seconds, 1),
        "import_verdicts_s": round(verdict_seconds, 1),
        "report_s": round(report_seconds, 2),
        "kept": kept,
        "always_a": accuracies,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--postgres",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
    parser.add_argument("--skip-postgres", action="store_true")
    args = parser.parse_args()
    if not MMRB2.is_dir():
        print(f"The MMRB2 files are not at {MMRB2}; nothing to measure.")
        return 1
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-") as tmp:
        work = Path(tmp)
        images = placeholder_images(work / "images")
        results = [bench_backend("sqlite", f"sqlite:///{work / 'bench.sqlite3'}", images, work)]
        if not args.skip_postgres:
            try:
                url = fresh_postgres(args.postgres, "arbiter_bench")
            except Exception as exc:  # a missing server is a skipped row, not a crash
                print(f"PostgreSQL skipped: {exc}")
            else:
                results.append(bench_backend("postgres", url, images, work))
    print("MMRB2: 4 files, 4,000 pairs, 14,017 images, 8,000 verdicts")
    print(
        f"{'backend':10} {'import_pairs':>13} {'import_verdicts':>16} {'report':>8}  kept  always-A"
    )
    for row in results:
        acc = " / ".join(f"{row['always_a'][t]:.3f}" for t in TASKS)
        print(
            f"{row['backend']:10} {row['import_pairs_s']:>11.1f} s "
            f"{row['import_verdicts_s']:>14.1f} s {row['report_s']:>6.2f} s  {row['kept']}  {acc}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
