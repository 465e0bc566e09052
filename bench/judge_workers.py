"""Judging with one and with two Celery workers against providers whose capacity is the limit:
real `celery worker -P solo` processes on Redis and PostgreSQL, and two fake OpenAI-compatible
servers (devtools/fake_llm.py) in their own processes, each answering 429 above a hidden
capacity of --capacity calls at once (latency --latency s: the capacity is capacity / latency
calls a second).

usage: python -m bench.judge_workers [--postgres URL] [--redis URL] [--pairs 2000]
                                     [--latency 0.2] [--capacity 24] [--json]

Every judge may start 128 calls at once and finds the capacity itself (judging/rate_limits.py);
each has its own seed, so the response cache never answers one case from another's answers.
1. One worker, one judge on provider 1: --pairs pairs × 2 orders (two chunks, one after the
   other). Target: at least 90 % of the capacity.
2. Two workers, one judge on provider 1 (the two chunks at once, sharing the judge's limits in
   Redis). Target: within the capacity, and no more requests refused than case 1 (below).
3. One worker, two judges, one per provider, half the pairs each (one chunk each), started
   together: the worker runs one chunk after the other.
4. Two workers, the same as 3: one chunk on each worker at once. Target: at least 1.8 × the
   verdicts a second of case 3.
2'. Case 2 again, then 1'. case 1 again (the second worker stopped). A run's refused count is
   a count of rare events (about one per overload probe of the adaptive window) and varies
   by about its square root from run to run: "no more refused" reads the mean of cases 2 and
   2' against the mean of cases 1 and 1', allowing two standard deviations of that difference
   (2 × √(one worker's mean), the two means' difference having variance about that mean).
Times: first chunk started → last chunk finished, from the database.
"""

import argparse
import json
import sys
import tempfile
import time
from pathlib import Path

from bench.annotate_seed import PROJECT, seed
from bench.common import add_postgres_argument, django_start, free_port, fresh_postgres
from bench.judges import _start, _stats, _stop, _wait_for_port

DB_NAME = "arbiter_bench_judge_workers"


def _worker(env: dict, work: Path, name: str):
    log = work / f"worker-{name}.log"
    process = _start(
        [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-n",
         f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat",
         "-l", "INFO"],
        env, log,
    )  # fmt: skip
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        if log.exists() and b" ready." in log.read_bytes():
            return process
        if process.poll() is not None:
            break
        time.sleep(0.1)
    sys.exit(f"worker {name} did not start:\n{log.read_text()[-2000:]}")


def _runs(judges_and_pairs, project, ports) -> dict:
    """Start the runs together, wait for all of them; verdicts a second over their span."""
    from django.db.models import Sum

    from judging.models import JudgeRun, JudgeRunChunk
    from judging.services.runs import judge_run_start

    refused_before = {port: _stats(port)["refused"] for port in ports}
    runs = [judge_run_start(judge, project, pair_ids=ids) for judge, ids in judges_and_pairs]
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        if all(r.status == JudgeRun.Status.FINISHED for r in map(_fresh, runs)):
            break
        time.sleep(0.1)
    else:
        sys.exit("the runs did not finish in 10 minutes")
    runs = [_fresh(run) for run in runs]
    span = (max(r.finished_at for r in runs) - min(r.started_at for r in runs)).total_seconds()
    tally = JudgeRunChunk.objects.filter(run__in=runs).aggregate(
        answered=Sum("answered"), failed=Sum("failed")
    )
    verdicts, failed = tally["answered"], tally["failed"]
    return {
        "verdicts": verdicts,
        "failed": failed,
        "seconds": round(span, 2),
        "verdicts_per_second": round(verdicts / span, 1),
        "refused": sum(_stats(port)["refused"] - refused_before[port] for port in ports),
    }


def _fresh(run):
    run.refresh_from_db()
    return run


def main() -> None:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    parser.add_argument("--redis", default="redis://127.0.0.1:6379/13")
    parser.add_argument("--pairs", type=int, default=2000)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--capacity", type=int, default=24)
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arbiter-bench-judge-workers-"))
    env = django_start(fresh_postgres(options.postgres, DB_NAME), work, redis_url=options.redis)
    import redis

    from content.models import Pair
    from judging.services.judges import connection_save, judge_save
    from projects.models import Project

    redis.from_url(options.redis).flushdb()  # stale queue entries and limiter keys
    print(f"seeding {options.pairs} pairs ...", flush=True)
    seed(work, pairs_per_task=options.pairs // 4, annotators=0)
    project = Project.objects.get(slug=PROJECT)
    pair_ids = list(
        Pair.objects.filter(project=project).order_by("id").values_list("id", flat=True)
    )
    half = len(pair_ids) // 2

    ports = [free_port(), free_port()]
    servers = [
        _start(
            [
                sys.executable,
                "-m",
                "devtools.fake_llm",
                "--port",
                str(port),
                "--latency",
                str(options.latency),
                "--capacity",
                str(options.capacity),
            ],
            env,
            work / f"fake-{port}.log",
        )  # fmt: skip
        for port in ports
    ]
    connections = []
    for number, port in enumerate(ports, 1):
        _wait_for_port(port)
        connection, _ = connection_save(
            f"bench-provider-{number}", backend="openai",
            base_url=f"http://127.0.0.1:{port}/v1", all_projects=True,
        )  # fmt: skip
        connections.append(connection)
    seeds = iter(range(100, 200))

    def judge(connection):
        made, _ = judge_save(
            f"bench-workers-{next(seeds)}", project=project, backend="openai", model="fake",
            connection=connection, concurrency=128, requests_per_minute=100_000,
            timeout_seconds=30, sampling={"seed": next(seeds)},
        )  # fmt: skip
        return made

    workers = [_worker(env, work, "first")]
    try:
        print("1. one worker, one judge ...", flush=True)
        one = _runs([(judge(connections[0]), pair_ids)], project, ports)
        print("3. one worker, two judges on two providers ...", flush=True)
        one_two = _runs(
            [(judge(connections[0]), pair_ids[:half]), (judge(connections[1]), pair_ids[half:])],
            project, ports,
        )  # fmt: skip
        workers.append(_worker(env, work, "second"))
        print("2. two workers, one judge ...", flush=True)
        shared = _runs([(judge(connections[0]), pair_ids)], project, ports)
        print("4. two workers, two judges on two providers ...", flush=True)
        two_two = _runs(
            [(judge(connections[0]), pair_ids[:half]), (judge(connections[1]), pair_ids[half:])],
            project, ports,
        )  # fmt: skip
        print("2'. two workers, one judge, again ...", flush=True)
        shared_again = _runs([(judge(connections[0]), pair_ids)], project, ports)
        _stop(workers.pop())
        print("1'. one worker, one judge, again ...", flush=True)
        one_again = _runs([(judge(connections[0]), pair_ids)], project, ports)
    finally:
        for process in (*workers, *servers):
            _stop(process)

    capacity = options.capacity / options.latency
    one["ratio_to_capacity"] = round(one["verdicts_per_second"] / capacity, 3)
    shared["ratio_to_capacity"] = round(shared["verdicts_per_second"] / capacity, 3)
    shared_again["ratio_to_capacity"] = round(shared_again["verdicts_per_second"] / capacity, 3)
    two_two["ratio_to_one_worker"] = round(
        two_two["verdicts_per_second"] / one_two["verdicts_per_second"], 2
    )
    result = {"one_worker": one, "one_worker_again": one_again, "two_workers_one_judge": shared}
    result["two_workers_one_judge_again"] = shared_again
    result |= {"one_worker_two_judges": one_two, "two_workers_two_judges": two_two}
    if options.json:
        print(json.dumps(result, indent=2))
    calls = f"{len(pair_ids)} pairs × 2 orders"
    print(
        f"\n1. one worker: {one['verdicts']} verdicts ({calls}) in {one['seconds']} s = "
        f"{one['verdicts_per_second']} verdicts/s, {one['ratio_to_capacity']:.0%} of the "
        f"capacity {capacity:.0f}/s ({options.capacity} at once, {options.latency} s); "
        f"{one['refused']} requests refused; again: {one_again['verdicts_per_second']} "
        f"verdicts/s, {one_again['refused']} refused"
    )
    one_mean = (one["refused"] + one_again["refused"]) / 2
    shared_mean = (shared["refused"] + shared_again["refused"]) / 2
    allowance = 2 * one_mean**0.5
    print(
        f"2. two workers, one judge: {shared['verdicts_per_second']} and "
        f"{shared_again['verdicts_per_second']} verdicts/s, {shared['ratio_to_capacity']:.0%} "
        f"and {shared_again['ratio_to_capacity']:.0%} of the capacity; {shared['refused']} and "
        f"{shared_again['refused']} refused, mean {shared_mean:g} against one worker's "
        f"{one_mean:g} ({one['refused']}, {one_again['refused']}; allowed up to "
        f"{one_mean + allowance:.1f})"
    )
    print(
        f"3-4. two judges on two providers: one worker {one_two['verdicts_per_second']} "
        f"verdicts/s, two workers {two_two['verdicts_per_second']} verdicts/s = "
        f"{two_two['ratio_to_one_worker']}× ({one_two['refused']} and {two_two['refused']} "
        "refused)"
    )
    cases = (one, one_again, shared, shared_again, one_two, two_two)
    failed = sum(case["failed"] for case in cases)
    ok = one["ratio_to_capacity"] >= 0.9
    ok = ok and max(shared["ratio_to_capacity"], shared_again["ratio_to_capacity"]) <= 1.0
    ok = ok and shared_mean <= one_mean + allowance and two_two["ratio_to_one_worker"] >= 1.8
    ok = ok and failed == 0
    print(
        "targets (one worker ≥ 90 % of capacity; two workers on one judge within it and no "
        "more refused, within the counts' noise; two judges ≥ 1.8× with two workers; no "
        "failure):",
        "OK" if ok else "MISSED",
    )
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
