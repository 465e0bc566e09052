"""Server time of the annotate loop at MMRB2 scale: claim + render, and submit (htmx).

usage: python -m bench.annotate [--postgres URL] [--iterations 300] [--warmup 30]
                                [--pairs-per-task 1000] [--prefill 0.5] [--json] [--explain]

Seeds a fresh PostgreSQL database `arbiter_bench_annotate` with 4,000 queued pairs over four
tasks and 30 annotators (bench.annotate_seed), optionally rates part of the pairs in advance
(--prefill, a campaign half done by default), then times the annotator's requests in-process
with django.test.Client: the client's time is the server's time (middleware, session, views,
queries, templates), without network or WSGI server. Query counts come from
CaptureQueriesContext and are shown per pair size: they must not grow with the parts.
--explain adds EXPLAIN ANALYZE (planning and execution time) of every SELECT of the requests
(bench.annotate_explain).
Exit status 1 when a median misses the 50 ms target or a query count varies with the pair.
"""

import argparse
import json
import os
import random
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.annotate_explain import explain_requests, print_explain
from bench.annotate_seed import DB_NAME, PAIRS_PER_TASK, PROJECT, TASKS, rating_form, seed
from bench.common import add_postgres_argument, django_start, fresh_postgres, percentile

TARGET_MS = 50.0


# ---------------------------------------------------------------- measuring


def pair_sizes() -> dict[int, tuple[int, int]]:
    """pair id → (parts, images) as the annotate page shows them (prompt + both responses)."""
    from content.models import Pair

    sizes = {}
    rows = Pair.objects.values_list(
        "id", "prompt__content", "response_a__content", "response_b__content"
    )
    for pair_id, *contents in rows:
        parts = [part for content in contents for part in (content or [])]
        sizes[pair_id] = (len(parts), sum(1 for kind, _ in parts if kind == "image"))
    return sizes


def summary(samples: list[dict]) -> dict:
    ms = [s["ms"] for s in samples]
    queries = sorted({s["queries"] for s in samples})
    return {
        "n": len(samples),
        "median_ms": round(statistics.median(ms), 2),
        "p95_ms": round(percentile(ms, 0.95), 2),
        "max_ms": round(max(ms), 2),
        "python_cpu_median_ms": round(statistics.median(s["cpu_ms"] for s in samples), 2),
        "sql_median_ms": round(statistics.median(s["db_ms"] for s in samples), 2),
        "queries": queries,
    }


def _timed(client, method: str, url: str, data=None, **extra) -> tuple[object, dict]:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()  # a full log (9,000 entries) would break the count
    with CaptureQueriesContext(connection) as captured:
        cpu = time.process_time()
        started = time.perf_counter()
        response = getattr(client, method)(url, data, **extra)
        elapsed = (time.perf_counter() - started) * 1000
        cpu = (time.process_time() - cpu) * 1000
    sample = {"ms": elapsed, "cpu_ms": cpu, "queries": len(captured)}
    sample["db_ms"] = sum(float(query["time"]) for query in captured.captured_queries) * 1000
    return response, {**sample, "status": response.status_code}


def _assignment_id(url: str) -> int:
    return int(url.rstrip("/").rsplit("/", 1)[1])


def measure(iterations: int, warmup: int, sizes: dict) -> dict:
    """Timed claim + render, timed htmx submits, and the page of the smallest and the largest
    open pair; summaries per request and per pair size."""
    from django.contrib.auth.models import User
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Assignment
    from annotation.services.ratings import RatingInput, rating_submit
    from projects.models import Task

    rng = random.Random("bench/measure")
    tasks = list(Task.objects.filter(project__slug=PROJECT).order_by("id"))
    users = list(User.objects.filter(username__startswith="annotator").order_by("username"))
    clients = []
    for user in users:
        client = Client()
        client.force_login(user)
        clients.append(client)

    def pair_of(assignment_id: int) -> int:
        return Assignment.objects.values_list("pair_id", flat=True).get(pk=assignment_id)

    def check(sample: dict, expected: int, what: str) -> None:
        if sample["status"] != expected:
            raise SystemExit(f"{what}: HTTP {sample['status']}, expected {expected}")

    # (a) claim + render: a fresh claim each time (the rating goes in through the service,
    # untimed, so that the next POST .../next/ claims instead of resuming a lease).
    print(f"  claim + render: {warmup} warm-up + {iterations} iterations")
    claims, renders = [], []
    for i in range(warmup + iterations):
        k = i % len(users)
        task = tasks[(i // len(users) + k) % len(tasks)]
        url = reverse("task-next", args=[PROJECT, task.slug])
        response, claim = _timed(clients[k], "post", url)
        check(claim, 302, url)
        location = response["Location"]
        _, render = _timed(clients[k], "get", location)
        check(render, 200, location)
        assignment_id = _assignment_id(location)
        rating_submit(assignment_id, users[k], RatingInput(overall=rng.randint(1, 7)))
        if i >= warmup:
            parts, images = sizes[pair_of(assignment_id)]
            for sample in (claim, render):
                sample.update(parts=parts, images=images)
            claims.append(claim)
            renders.append(render)

    # (b) submit with htmx: rating + claim of the next pair + its workspace fragment.
    print(f"  submit (htmx): {warmup} warm-up + {iterations} iterations")
    current, user_task = {}, {}
    for k, client in enumerate(clients):
        user_task[k] = tasks[k % len(tasks)]
        response = client.post(reverse("task-next", args=[PROJECT, user_task[k].slug]))
        current[k] = _assignment_id(response["Location"])
    submits = []
    for i in range(warmup + iterations):
        k = i % len(users)
        url = reverse("annotate", args=[current[k]])
        response, submit = _timed(
            clients[k], "post", url, rating_form(rng, user_task[k]), headers={"HX-Request": "true"}
        )
        check(submit, 200, url)
        pushed = response["HX-Push-Url"]
        if not pushed.startswith("/annotate/"):
            raise SystemExit(f"{users[k]} ran out of pairs; seed more (--pairs-per-task)")
        current[k] = _assignment_id(pushed)
        if i >= warmup:
            submit.update(zip(("parts", "images"), sizes[pair_of(current[k])], strict=True))
            submits.append(submit)

    # The same page for the smallest and the largest pair: query count must not change.
    probe_user, probe_client = users[-1], clients[-1]
    probes = {}
    for label, pair_id in _extreme_pairs(sizes, probe_user).items():
        assignment = Assignment.objects.create(
            pair_id=pair_id,
            annotator=probe_user,
            swapped=False,
            lease_expires_at=_in_minutes(30),
        )
        url = reverse("annotate", args=[assignment.pk])
        samples = []
        for _ in range(warmup + 30):
            _, sample = _timed(probe_client, "get", url)
            check(sample, 200, url)
            samples.append(sample)
        parts, images = sizes[pair_id]
        probes[label] = {"parts": parts, "images": images, **summary(samples[warmup:])}
        assignment.delete()

    claim_render = [
        {key: c[key] + r[key] for key in ("ms", "cpu_ms", "db_ms", "queries")}
        for c, r in zip(claims, renders, strict=True)
    ]
    return {
        "requests": {
            "claim (POST next/)": summary(claims),
            "render (GET annotate/)": summary(renders),
            "claim + render": summary(claim_render),
            "submit (htmx POST)": summary(submits),
        },
        "by_size": _by_size({"claim": claims, "render": renders, "submit": submits}),
        "probes": probes,
    }


def _in_minutes(minutes: int):
    from datetime import timedelta

    from django.utils import timezone

    return timezone.now() + timedelta(minutes=minutes)


def _extreme_pairs(sizes: dict, user) -> dict[str, int]:
    from annotation.models import Assignment
    from content.models import Pair

    taken = set(Assignment.objects.filter(annotator=user).values_list("pair_id", flat=True))
    open_ids = set(
        Pair.objects.filter(status__in=[Pair.Status.QUEUED, Pair.Status.IN_PROGRESS])
        .exclude(pk__in=taken)
        .values_list("id", flat=True)
    )
    candidates = [(sizes[p], p) for p in open_ids]
    return {"fewest parts": min(candidates)[1], "most parts": max(candidates)[1]}


SIZE_BUCKETS = ((1, 3), (4, 8), (9, 20), (21, 1000))


def _by_size(series: dict[str, list[dict]]) -> list[dict]:
    rows = []
    for low, high in SIZE_BUCKETS:
        row = {"images": f"{low}-{high}" if high < 1000 else f"{low}+"}
        for name, samples in series.items():
            inside = [s for s in samples if low <= s["images"] <= high]
            row[name] = summary(inside) if inside else None
        rows.append(row)
    return rows


# ---------------------------------------------------------------- report


def print_report(meta: dict, results: dict) -> bool:
    print()
    print(
        f"Annotate server time, PostgreSQL, in-process django.test.Client: {meta['pairs']:,} "
        f"pairs in 4 tasks, {meta['images']:,} images, {meta['annotators']} annotators"
    )
    prefill = meta["prefill"]
    if prefill:
        print(
            f"prefilled: {prefill['complete']:,} complete + {prefill['partial']:,} partly rated "
            f"pairs ({prefill['ratings']:,} ratings)"
        )
    load = meta.get("loadavg")
    if load:
        print(
            f"machine: {os.cpu_count()} CPUs, load average {load[0]:.1f} before / {load[1]:.1f} "
            "after measuring (other work on the machine inflates the figures)"
        )
    print()
    print(
        f"{'request':26} {'n':>5} {'median':>9} {'p95':>9} {'max':>9}  "
        f"{'py cpu':>7} {'sql':>7}  queries"
    )
    for name, row in results["requests"].items():
        queries = ", ".join(str(q) for q in row["queries"])
        print(
            f"{name:26} {row['n']:>5} {row['median_ms']:>6.1f} ms {row['p95_ms']:>6.1f} ms "
            f"{row['max_ms']:>6.1f} ms  {row['python_cpu_median_ms']:>7.1f} "
            f"{row['sql_median_ms']:>7.1f}  {queries}"
        )
    print("(median, p95, max: wall time per request; py cpu / sql: medians of this process's CPU")
    print(" time and of the time spent in SQL statements, both in ms)")
    print()
    print("Queries by the pair's number of images (prompt + both sides):")
    print(
        f"{'images':8} {'n':>5}  {'claim q':>8} {'render q':>9} {'submit q':>9}  "
        "median ms render / submit"
    )
    for row in results["by_size"]:
        cells, n, medians = [], 0, []
        for name in ("claim", "render", "submit"):
            data = row[name]
            cells.append(",".join(map(str, data["queries"])) if data else "-")
            medians.append(f"{data['median_ms']:.1f}" if data else "-")
            n = max(n, data["n"] if data else 0)
        print(
            f"{row['images']:8} {n:>5}  {cells[0]:>8} {cells[1]:>9} {cells[2]:>9}  "
            f"{medians[1]} / {medians[2]}"
        )
    print()
    print("GET annotate/ of the extreme pairs (30 requests each):")
    for label, row in results["probes"].items():
        print(
            f"  {label:13} {row['parts']:>3} parts, {row['images']:>3} images: median "
            f"{row['median_ms']:.1f} ms, p95 {row['p95_ms']:.1f} ms, queries "
            f"{', '.join(map(str, row['queries']))}"
        )
    requests = results["requests"]
    verdicts = {
        "claim + render": requests["claim + render"]["median_ms"],
        "submit (htmx POST)": requests["submit (htmx POST)"]["median_ms"],
    }
    ok = all(v < TARGET_MS for v in verdicts.values())
    all_queries = [
        set(row[name]["queries"])
        for row in results["by_size"]
        for name in ("claim", "render", "submit")
        if row[name]
    ]
    probe_queries = [set(row["queries"]) for row in results["probes"].values()]
    constant = len(set().union(*probe_queries)) == 1 and all(len(q) == 1 for q in all_queries)
    print()
    for name, median in verdicts.items():
        verdict = "OK" if median < TARGET_MS else "MISSED"
        print(f"target median < {TARGET_MS:.0f} ms, {name}: {median:.1f} ms  {verdict}")
    print(f"query count independent of pair size: {'yes' if constant else 'NO'}")
    return ok and constant


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    parser.add_argument("--iterations", type=int, default=300)
    parser.add_argument("--warmup", type=int, default=30)
    parser.add_argument("--pairs-per-task", type=int, default=PAIRS_PER_TASK)
    parser.add_argument(
        "--prefill",
        type=float,
        default=0.5,
        help="share of each task's pairs already complete before measuring (0 = fresh queue)",
    )
    parser.add_argument(
        "--explain", action="store_true", help="EXPLAIN ANALYZE the SELECTs of the requests"
    )
    parser.add_argument("--json", action="store_true", help="print the figures as JSON too")
    args = parser.parse_args()

    with tempfile.TemporaryDirectory(prefix="arbiter-bench-annotate-") as tmp:
        work = Path(tmp)
        database_url = fresh_postgres(args.postgres, DB_NAME)
        print(f"database {DB_NAME}: migrating")
        django_start(database_url, work / "var")
        print(f"seeding {args.pairs_per_task * len(TASKS):,} pairs")
        meta = seed(work, pairs_per_task=args.pairs_per_task, prefill=args.prefill)
        print(f"seeded in {meta['seed_s']} s; measuring")
        sizes = pair_sizes()
        load_before = os.getloadavg()[0]
        results = measure(args.iterations, args.warmup, sizes)
        meta["loadavg"] = [load_before, os.getloadavg()[0]]
        ok = print_report(meta, results)
        explained = explain_requests() if args.explain else None
        if explained:
            print_explain(explained)
        if args.json:
            print(json.dumps({"setup": meta, **results, "explain": explained, "ok": ok}, indent=2))
        from django.db import connections

        connections.close_all()
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
