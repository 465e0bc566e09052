"""Judge run throughput on the full stack: one `celery worker` process (solo pool) on Redis
and PostgreSQL, against the fake OpenAI-compatible server (devtools/fake_llm.py) in its own
process.

usage: python -m bench.judges [--postgres URL] [--redis URL] [--pairs 4000] [--latency 0.2]
                              [--concurrency 64] [--budget-rpm 9600] [--json]

1. Throughput: --pairs pairs × 2 orders with the given latency and concurrency cap; the ideal
   is concurrency / latency verdicts per second (64 / 0.2 s = 320); target at least 85 %. The
   same pairs again with a second judge (warm: worker, caches and database pages): the first
   run, right after the import, must reach at least 90 % of it (the cold start).
2. Budget: a quarter of the pairs with a requests-per-minute budget below that ideal; target
   at least 90 % of the budget and never above it.
3. Adaptive: a judge allowed 128 calls at once against a second fake server that answers 429
   above a hidden capacity of 24 calls at once (latency as above), over 1,500 pairs (3,000
   calls); target at least 85 % of capacity / latency over the whole run, settling included,
   with under 5 % of the requests refused.
Each judge has its own seed, so the response cache (which would answer a repeated request
for free) never serves one run from another's answers.
Times are the run's own (first chunk started → last chunk finished, from the database) and the
wall time from the start call to the finish seen by polling.
"""

import argparse
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.annotate_seed import PROJECT, seed
from bench.common import ROOT, add_postgres_argument, django_start, free_port, fresh_postgres

DB_NAME = "arbiter_bench_judges"
ADAPTIVE_CAPACITY = 24
ADAPTIVE_PAIRS = 1500


def _stats(port: int) -> dict:
    import urllib.request

    with urllib.request.urlopen(f"http://127.0.0.1:{port}/stats", timeout=5) as response:
        return json.loads(response.read())


def _start(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("wb"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def _stop(process: subprocess.Popen) -> None:
    if process.poll() is None:
        os.killpg(process.pid, signal.SIGTERM)
        try:
            process.wait(15)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)


def _wait_for_port(port: int, seconds: float = 20) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        with socket.socket() as sock:
            if sock.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.1)
    sys.exit(f"nothing listens on port {port}")


def _timed_run(judge, project, pair_ids) -> dict:
    from judging.models import JudgeRun
    from judging.selectors import run_progress
    from judging.services.runs import judge_run_start

    started = time.perf_counter()
    run = judge_run_start(judge, project, pair_ids=pair_ids)
    while True:
        run.refresh_from_db()
        if run.status in (JudgeRun.Status.FINISHED, JudgeRun.Status.CANCELLED):
            break
        time.sleep(0.1)
    wall = time.perf_counter() - started
    progress = run_progress(run)
    run_seconds = (run.finished_at - run.started_at).total_seconds()
    return {
        "trials": run.trials,
        "answered": progress.done,
        "failed": progress.failed,
        "chunks": progress.chunks,
        "run_seconds": round(run_seconds, 2),
        "wall_seconds": round(wall, 2),
        "verdicts_per_second": round(progress.done / run_seconds, 1),
        "verdicts_per_second_wall": round(progress.done / wall, 1),
    }


def main() -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--pairs", type=int, default=4000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--concurrency", type=int, default=64)
    parser.add_argument("--budget-rpm", type=int, default=9600, help="160 per second")
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arbiter-bench-judges-"))
    env = django_start(fresh_postgres(options.postgres, DB_NAME), work, redis_url=options.redis)
    import redis

    from content.models import Pair
    from judging.services.judges import connection_save, judge_save
    from projects.models import Project

    redis.from_url(options.redis).flushdb()  # stale queue entries and limiter keys
    print(f"seeding {options.pairs} pairs ...", flush=True)
    seeded = seed(work, pairs_per_task=options.pairs // 4, annotators=0)
    project = Project.objects.get(slug=PROJECT)
    pair_ids = list(
        Pair.objects.filter(project=project).order_by("id").values_list("id", flat=True)
    )

    port, capped_port = free_port(), free_port()
    server = _start(
        [sys.executable, "-m", "devtools.fake_llm", "--port", str(port),
         "--latency", str(options.latency)],
        env, work / "fake-server.log",
    )  # fmt: skip
    capped = _start(
        [sys.executable, "-m", "devtools.fake_llm", "--port", str(capped_port),
         "--latency", str(options.latency), "--capacity", str(ADAPTIVE_CAPACITY)],
        env, work / "fake-capped.log",
    )  # fmt: skip
    worker = _start(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo",
         "--without-gossip", "--without-mingle", "--without-heartbeat", "-l", "WARNING"],
        env, work / "worker.log",
    )  # fmt: skip
    try:
        _wait_for_port(port)
        _wait_for_port(capped_port)
        time.sleep(3)  # the worker connects to Redis
        connection, _ = connection_save(
            "bench-fake", backend="openai", base_url=f"http://127.0.0.1:{port}/v1",
            all_projects=True,
        )  # fmt: skip
        fast, _ = judge_save(
            "bench-fast", project=project, backend="openai", model="fake", connection=connection,
            concurrency=options.concurrency, requests_per_minute=100_000, timeout_seconds=30,
        )  # fmt: skip
        budgeted, _ = judge_save(
            "bench-budget", project=project, backend="openai", model="fake", connection=connection,
            concurrency=options.concurrency, requests_per_minute=options.budget_rpm,
            timeout_seconds=30, sampling={"seed": 1},
        )  # fmt: skip
        warm, _ = judge_save(
            "bench-warm", project=project, backend="openai", model="fake", connection=connection,
            concurrency=options.concurrency, requests_per_minute=100_000, timeout_seconds=30,
            sampling={"seed": 3},
        )  # fmt: skip
        capped_connection, _ = connection_save(
            "bench-capped", backend="openai", base_url=f"http://127.0.0.1:{capped_port}/v1",
            all_projects=True,
        )  # fmt: skip
        adaptive_judge, _ = judge_save(
            "bench-adaptive", project=project, backend="openai", model="fake",
            connection=capped_connection, concurrency=128, requests_per_minute=100_000,
            timeout_seconds=30, sampling={"seed": 2},
        )  # fmt: skip
        print("throughput run ...", flush=True)
        throughput = _timed_run(fast, project, pair_ids)
        print("the same run again, warm (another judge, same pairs) ...", flush=True)
        second = _timed_run(warm, project, pair_ids)
        print("budget run ...", flush=True)
        budget = _timed_run(budgeted, project, pair_ids[: len(pair_ids) // 4])
        print("adaptive run ...", flush=True)
        adaptive = _timed_run(adaptive_judge, project, pair_ids[:ADAPTIVE_PAIRS])
        adaptive.update(_stats(capped_port))
    finally:
        _stop(worker)
        _stop(server)
        _stop(capped)

    ideal = options.concurrency / options.latency
    budget_rate = options.budget_rpm / 60
    throughput["ideal_per_second"] = round(ideal, 1)
    throughput["ratio_to_ideal"] = round(throughput["verdicts_per_second"] / ideal, 3)
    second["ratio_to_ideal"] = round(second["verdicts_per_second"] / ideal, 3)
    # Cold start: the first run after the import against the same run once everything is warm.
    throughput["cold_to_warm"] = round(
        throughput["verdicts_per_second"] / second["verdicts_per_second"], 3
    )
    budget["budget_per_second"] = round(budget_rate, 1)
    budget["ratio_to_budget"] = round(budget["verdicts_per_second"] / budget_rate, 3)
    capacity_rate = ADAPTIVE_CAPACITY / options.latency
    adaptive["capacity_per_second"] = round(capacity_rate, 1)
    adaptive["ratio_to_capacity"] = round(adaptive["verdicts_per_second"] / capacity_rate, 3)
    adaptive["refused_share"] = round(adaptive["refused"] / max(adaptive["served"], 1), 4)
    result = {
        "seeded": seeded,
        "throughput": throughput,
        "warm": second,
        "budget": budget,
        "adaptive": adaptive,
    }
    if options.json:
        print(json.dumps(result, indent=2))
    print(
        f"\nthroughput: {throughput['answered']} verdicts ({options.pairs} pairs × 2 orders) in "
        f"{throughput['run_seconds']} s = {throughput['verdicts_per_second']} verdicts/s, "
        f"{throughput['ratio_to_ideal']:.0%} of the ideal {ideal:.0f}/s "
        f"(concurrency {options.concurrency}, latency {options.latency} s; wall "
        f"{throughput['wall_seconds']} s, {throughput['chunks']} chunks, "
        f"{throughput['failed']} failed)"
    )
    print(
        f"warm (the same pairs, a second judge): {second['verdicts_per_second']} verdicts/s, "
        f"{second['ratio_to_ideal']:.0%} of the ideal; the first run reached "
        f"{throughput['cold_to_warm']:.0%} of it"
    )
    print(
        f"budget: {budget['answered']} verdicts in {budget['run_seconds']} s = "
        f"{budget['verdicts_per_second']} verdicts/s, {budget['ratio_to_budget']:.0%} of the "
        f"budget {budget_rate:.0f}/s ({options.budget_rpm} rpm; {budget['failed']} failed)"
    )
    print(
        f"adaptive: {adaptive['answered']} verdicts in {adaptive['run_seconds']} s = "
        f"{adaptive['verdicts_per_second']} verdicts/s, {adaptive['ratio_to_capacity']:.0%} of "
        f"the capacity {capacity_rate:.0f}/s (concurrency 128 against {ADAPTIVE_CAPACITY}); "
        f"{adaptive['refused']} of {adaptive['served']} requests refused "
        f"({adaptive['refused_share']:.1%}); {adaptive['failed']} failed"
    )
    ok = throughput["ratio_to_ideal"] >= 0.85 and 0.9 <= budget["ratio_to_budget"] <= 1.0
    ok = ok and throughput["cold_to_warm"] >= 0.9  # the first run is not slower
    ok = ok and adaptive["ratio_to_capacity"] >= 0.85 and adaptive["refused_share"] < 0.05
    ok = ok and throughput["failed"] == budget["failed"] == adaptive["failed"] == 0
    print(
        "targets (≥ 85 % of ideal; first run ≥ 90 % of a warm one; 90–100 % of budget; "
        "adaptive ≥ 85 % of capacity with < 5 % refused; no failure):",
        "OK" if ok else "MISSED",
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
