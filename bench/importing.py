"""Benchmarks on real MMRB2 data: import of the four release files (4,000 pairs, 14,017
images) and `report --json`, on SQLite and, when reachable, PostgreSQL.

usage: python -m bench.importing [--postgres URL] [--skip-postgres] [--tasks TASK ...]
Each step runs as its own `manage.py` process against a fresh database, so the figures include
Python start-up, as a user would see them. Needs ../shared/datasets/mmrb2 beside the checkout;
--tasks t2i imports one set (1,000 pairs) for a quick run.
"""

import argparse
import json
import sys
import tempfile
from pathlib import Path

from bench.common import (
    MMRB2,
    MMRB2_TASKS,
    add_postgres_argument,
    add_tasks_argument,
    django_env,
    fresh_postgres,
    manage,
    placeholder_images,
)


def bench_backend(name: str, database_url: str, images: Path, work: Path, tasks: list) -> dict:
    env = django_env(database_url, work / name)
    manage(env, "migrate", "--noinput", "-v0")
    import_seconds = 0.0
    for task in tasks:
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
    for task in tasks:
        seconds, _ = manage(
            env,
            "import_verdicts",
            str(MMRB2 / "outputs" / f"{MMRB2_TASKS[task]}.json"),
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
    accuracies = {t: report["tasks"][t]["judges"]["always-a"]["accuracy"] for t in tasks}
    kept = sum(report["tasks"][t]["kept"] for t in tasks)
    return {
        "backend": name,
        "import_pairs_s": round(import_seconds, 1),
        "import_verdicts_s": round(verdict_seconds, 1),
        "report_s": round(report_seconds, 2),
        "kept": kept,
        "always_a": accuracies,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    parser.add_argument("--skip-postgres", action="store_true", help="SQLite only")
    add_tasks_argument(parser)
    args = parser.parse_args()
    if not MMRB2.is_dir():
        print(f"The MMRB2 files are not at {MMRB2}; nothing to measure.")
        return 1
    with tempfile.TemporaryDirectory(prefix="arbiter-bench-") as tmp:
        work = Path(tmp)
        images = placeholder_images(work / "images", args.tasks)
        sqlite = f"sqlite:///{work / 'bench.sqlite3'}"
        results = [bench_backend("sqlite", sqlite, images, work, args.tasks)]
        if not args.skip_postgres:
            try:
                url = fresh_postgres(args.postgres, "arbiter_bench")
            except Exception as exc:  # a missing server is a skipped row, not a crash
                print(f"PostgreSQL skipped: {exc}")
            else:
                results.append(bench_backend("postgres", url, images, work, args.tasks))
    if len(args.tasks) == len(MMRB2_TASKS):
        print("MMRB2: 4 files, 4,000 pairs, 14,017 images, 8,000 verdicts")
    else:
        print(f"MMRB2: {len(args.tasks)} of the 4 files ({', '.join(args.tasks)})")
    print(
        f"{'backend':10} {'import_pairs':>13} {'import_verdicts':>16} {'report':>8}  kept  always-A"
    )
    for row in results:
        acc = " / ".join(f"{row['always_a'][t]:.3f}" for t in args.tasks)
        print(
            f"{row['backend']:10} {row['import_pairs_s']:>11.1f} s "
            f"{row['import_verdicts_s']:>14.1f} s {row['report_s']:>6.2f} s  {row['kept']}  {acc}"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
