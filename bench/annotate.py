#!/usr/bin/env python
"""Server time of the annotate loop at MMRB2 scale: claim + render, and submit (htmx).

usage: python bench/annotate.py [--postgres URL] [--iterations 300] [--prefill 0.5] [--json]
                                [--explain]

Seeds a fresh PostgreSQL database `arbiter_bench_annotate` with 4,000 queued pairs over four
tasks (t2i, edit, interleaved, reasoning; text and Pillow-drawn images, 1 to 24 parts per
response, about 16,800 images) and 30 annotators, optionally rates part of the pairs in advance
(--prefill, a campaign half done by default), then times the annotator's requests in-process
with django.test.Client: the client's time is the server's time (middleware, session, views,
queries, templates), without network or WSGI server. Query counts come from
CaptureQueriesContext and are shown per pair size: they must not grow with the parts.
--explain adds EXPLAIN ANALYZE (planning and execution time) of every SELECT of the requests.
Exit status 1 when a median misses the 50 ms target or a query count varies with the pair.

bench/load.py imports the seeding from here.
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

ROOT = Path(__file__).resolve().parents[1]
DB_NAME = "arbiter_bench_annotate"
PROJECT = "mmrb2-bench"
TASKS = ("t2i", "edit", "interleaved", "reasoning")
PAIRS_PER_TASK = 1000
ANNOTATORS = 30
PASSWORD = "bench-annotate-pw"
TARGET_MS = 50.0

_VOCABULARY = (
    "the a red blue green small large cube sphere left right above below image shows "
    "three two four answer because therefore step first then finally count colour shape "
    "object scene prompt edit keep background foreground text label sign chart value "
    "bar line axis total mean result correct region marked circle arrow person dog cat"
)
WORDS = _VOCABULARY.split()


# ---------------------------------------------------------------- database and Django


def fresh_postgres(url: str, name: str = DB_NAME) -> str:
    """Drop and create `name` on the server of `url` (as bench/run.py does); its URL."""
    import psycopg

    admin, _, _ = url.rpartition("/")
    with psycopg.connect(url, autocommit=True) as conn:
        conn.execute(f"DROP DATABASE IF EXISTS {name} WITH (FORCE)")
        conn.execute(f"CREATE DATABASE {name}")
    return f"{admin}/{name}"


def django_env(database_url: str, var_dir: Path) -> dict[str, str]:
    """The environment of a process serving the bench database (this one or gunicorn)."""
    env = {
        **os.environ,
        "DATABASE_URL": database_url,
        "ARBITER_VAR_DIR": str(var_dir),
        "MEDIA_ROOT": str(var_dir / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "SECRET_KEY": "bench-only-secret-key-not-for-production-0123456789abcdefghij",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost,testserver",
    }
    env.pop("REDIS_URL", None)
    return env


def django_start(database_url: str, var_dir: Path) -> None:
    """Configure this process for the bench database, set Django up and migrate."""
    os.environ.clear()
    os.environ.update(django_env(database_url, var_dir))
    if str(ROOT) not in sys.path:
        sys.path.insert(0, str(ROOT))
    import django
    from django.core.management import call_command

    django.setup()
    call_command("migrate", "--noinput", verbosity=0)


# ---------------------------------------------------------------- synthetic MMRB2-like pairs


class _Drawer:
    """Small, distinct PNGs (a numbered colour field with a few shapes)."""

    def __init__(self, folder: Path):
        self.folder = folder
        self.count = 0

    def __call__(self, rng: random.Random) -> str:
        from PIL import Image, ImageDraw

        self.count += 1
        n = self.count
        size = rng.choice([(96, 96), (128, 96), (96, 128), (120, 80)])
        image = Image.new("RGB", size, (n % 251, (n // 251) % 251, 40 + (n // 63001) % 200))
        draw = ImageDraw.Draw(image)
        for _ in range(3):
            x, y = rng.randrange(size[0] - 20), rng.randrange(size[1] - 20)
            colour = (rng.randrange(256), rng.randrange(256), rng.randrange(256))
            draw.rectangle((x, y, x + rng.randrange(8, 20), y + rng.randrange(8, 20)), colour)
        name = f"img{n:06d}.png"
        image.save(self.folder / name, format="PNG")
        return name


def _sentence(rng: random.Random, words: int) -> str:
    text = " ".join(rng.choice(WORDS) for _ in range(words))
    return text[0].upper() + text[1:] + "."


def _paragraphs(rng: random.Random, count: int, markdown: bool = False) -> str:
    paragraphs = [
        " ".join(_sentence(rng, rng.randint(8, 18)) for _ in range(rng.randint(2, 4)))
        for _ in range(count)
    ]
    if markdown:
        paragraphs.append(
            "\n".join(f"{i}. **Step {i}**: {_sentence(rng, 10)}" for i in range(1, 4))
        )
    return "\n\n".join(paragraphs)


def _response(task: str, rng: random.Random, draw, number: int) -> list:
    if task == "t2i":
        count = rng.randint(2, 4) if rng.random() < 0.1 else 1
        return [["image", draw(rng)] for _ in range(count)]
    if task == "edit":
        return [["image", draw(rng)]]
    if task == "interleaved":
        steps = 12 if number % 100 == 0 else rng.randint(1, 6)  # a few very long stories
        parts = []
        for _ in range(steps):
            parts += [["text", _paragraphs(rng, 1)], ["image", draw(rng)]]
        return parts
    # reasoning: a long trace, with 0-3 marked-up images and commentary
    parts = [["text", _paragraphs(rng, rng.randint(2, 4), markdown=True)]]
    for _ in range(rng.randint(0, 3)):
        parts += [["image", draw(rng)], ["text", _paragraphs(rng, 1)]]
    return parts


def _prompt(task: str, rng: random.Random, draw) -> list:
    text = ["text", _paragraphs(rng, 1)]
    if task in ("edit", "reasoning") or (task == "interleaved" and rng.random() < 0.3):
        return [text, ["image", draw(rng)]]
    return [text]


def build_records(task: str, count: int, draw) -> list[dict]:
    records = []
    models = ["gen-alpha", "gen-beta", "gen-gamma", "gen-delta"]
    for number in range(1, count + 1):
        rng = random.Random(f"bench/{task}/{number}")
        model_a = rng.choice(models)
        records.append(
            {
                "id": f"{task}-{number:04d}",
                "prompt_source": "arbiter-bench",
                "prompt_metadata": {"task": task, "number": number},
                "prompt_content": _prompt(task, rng, draw),
                "response_a": {
                    "model_name": model_a,
                    "response_content": _response(task, rng, draw, number),
                },
                "response_b": {
                    "model_name": rng.choice([m for m in models if m != model_a]),
                    "response_content": _response(task, rng, draw, number),
                },
            }
        )
    return records


def seed(
    work: Path,
    *,
    pairs_per_task: int = PAIRS_PER_TASK,
    annotators: int = ANNOTATORS,
    prefill: float = 0.0,
    log=print,
) -> dict:
    """Project, 4 tasks of queued pairs, `annotators` users; Django must be set up."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.db import connection

    from annotation.models import Asset, Membership, Pair, Project
    from annotation.services.pair_import import pairs_import

    started = time.perf_counter()
    images = work / "images"
    images.mkdir(parents=True, exist_ok=True)
    draw = _Drawer(images)
    for task in TASKS:
        source = work / f"{task}.jsonl"
        records = build_records(task, pairs_per_task, draw)
        source.write_text("\n".join(json.dumps(r) for r in records) + "\n", encoding="utf-8")
        log(f"  {task}: {len(records)} pairs drawn ({draw.count} images so far), importing")
        pairs_import(source, project_slug=PROJECT, task_slug=task, images_dir=images)
    project = Project.objects.get(slug=PROJECT)
    Project.objects.filter(pk=project.pk).update(
        scale_points=7, annotators_per_pair=3, guidelines=_paragraphs(random.Random(1), 3)
    )
    Pair.objects.filter(project=project).update(status=Pair.Status.QUEUED)
    password = make_password(PASSWORD)  # hashed once: PBKDF2 per user would take minutes
    users = User.objects.bulk_create(
        User(username=f"annotator{i:02d}", password=password) for i in range(1, annotators + 1)
    )
    Membership.objects.bulk_create(
        Membership(user=u, project=project, role=Membership.Role.ANNOTATOR) for u in users
    )
    prefilled = prefill_ratings(project, users, prefill) if prefill > 0 else {}
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute("ANALYZE")  # planner statistics, as autovacuum would gather them
    return {
        "pairs": Pair.objects.filter(project=project).count(),
        "images": Asset.objects.count(),
        "annotators": len(users),
        "prefill": prefilled,
        "seed_s": round(time.perf_counter() - started, 1),
    }


def prefill_ratings(project, users, fraction: float) -> dict:
    """A campaign under way: `fraction` of each task's pairs complete (N ratings by random
    annotators), another fraction/5 partly rated; derived columns by pairs_decide."""
    from django.db import transaction
    from django.utils import timezone

    from annotation.models import Assignment, Pair, Rating
    from annotation.services.consensus import pairs_decide

    rng = random.Random("bench/prefill")
    n = project.annotators_per_pair
    now = timezone.now()
    counts = {"complete": 0, "partial": 0, "ratings": 0}
    with transaction.atomic():
        for task in project.tasks.all():
            ids = list(Pair.objects.filter(task=task).values_list("id", flat=True))
            rng.shuffle(ids)
            complete = ids[: int(len(ids) * fraction)]
            partial = ids[len(complete) : len(complete) + int(len(ids) * fraction / 5)]
            plan = [(p, n) for p in complete] + [(p, rng.randint(1, n - 1)) for p in partial]
            assignments = []
            for pair_id, raters in plan:
                for user in rng.sample(users, raters):
                    assignments.append(
                        Assignment(
                            pair_id=pair_id,
                            annotator=user,
                            swapped=rng.random() < 0.5,
                            status=Assignment.Status.SUBMITTED,
                            submitted_at=now,
                        )
                    )
            Assignment.objects.bulk_create(assignments, batch_size=1000)
            Rating.objects.bulk_create(
                (
                    Rating(
                        assignment=a,
                        pair_id=a.pair_id,
                        annotator=a.annotator,
                        scale=project.scale_points,
                        overall=rng.randint(1, project.scale_points),
                        active_seconds=rng.uniform(20, 300),
                    )
                    for a in assignments
                ),
                batch_size=1000,
            )
            touched = list(Pair.objects.filter(pk__in=[p for p, _ in plan]))
            pairs_decide(touched, project)
            Pair.objects.filter(pk__in=[p for p, _ in plan], rating_count__lt=n).update(
                status=Pair.Status.IN_PROGRESS
            )
            counts["complete"] += len(complete)
            counts["partial"] += len(partial)
            counts["ratings"] += len(assignments)
    return counts


def pair_sizes() -> dict[int, tuple[int, int]]:
    """pair id → (parts, images) as the annotate page shows them (prompt + both responses)."""
    from annotation.models import Pair

    sizes = {}
    rows = Pair.objects.values_list(
        "id", "prompt__content", "response_a__content", "response_b__content"
    )
    for pair_id, *contents in rows:
        parts = [part for content in contents for part in (content or [])]
        sizes[pair_id] = (len(parts), sum(1 for kind, _ in parts if kind == "image"))
    return sizes


# ---------------------------------------------------------------- measuring


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    index = max(0, min(len(ordered) - 1, round(q * len(ordered) + 0.5) - 1))
    return ordered[index]


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


def _form(rng: random.Random, task) -> dict:
    data = {
        "action": "submit",
        "overall": str(rng.randint(1, 7)),
        "rationale": _sentence(rng, 12),
        "active_seconds": f"{rng.uniform(20, 240):.1f}",
    }
    for aspect in task.aspects:  # every aspect, so that the query count does not vary
        data[f"aspect_{aspect['key']}"] = str(rng.randint(1, 7))
    return data


def measure(iterations: int, warmup: int, sizes: dict, log=print) -> dict:
    from django.contrib.auth.models import User
    from django.test import Client
    from django.urls import reverse

    from annotation.models import Assignment, Task
    from annotation.services.ratings import RatingInput, rating_submit

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
    log(f"  claim + render: {warmup} warm-up + {iterations} iterations")
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
    log(f"  submit (htmx): {warmup} warm-up + {iterations} iterations")
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
            clients[k], "post", url, _form(rng, user_task[k]), headers={"HX-Request": "true"}
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
    from annotation.models import Assignment, Pair

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


def explain_requests(repeat: int = 5) -> dict:
    """EXPLAIN ANALYZE every SELECT that one claim, one render and one submit send (taken from
    the real requests, with their literals): where does the database time go, planning or
    execution? Medians of `repeat` runs; the full plan of the claim's candidate query."""
    import re

    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from annotation.models import Task

    user = User.objects.filter(username__startswith="annotator").order_by("username").first()
    task = Task.objects.filter(project__slug=PROJECT, slug="interleaved").get()
    client = Client()
    client.force_login(user)
    captured = {}
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as queries:
        location = client.post(reverse("task-next", args=[PROJECT, task.slug]))["Location"]
    captured["claim"] = [q["sql"] for q in queries.captured_queries]
    with CaptureQueriesContext(connection) as queries:
        client.get(location)
    captured["render"] = [q["sql"] for q in queries.captured_queries]
    form = _form(random.Random(1), task)
    with CaptureQueriesContext(connection) as queries:
        client.post(location, form, headers={"HX-Request": "true"})
    captured["submit"] = [q["sql"] for q in queries.captured_queries]

    statements, claim_plan = {}, []
    with connection.cursor() as cursor:
        for request, sqls in captured.items():
            rows = []
            for sql in sqls:
                if not sql.lstrip().upper().startswith("SELECT"):
                    continue
                timings = []
                for _ in range(repeat):
                    cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS, SUMMARY) {sql}")
                    plan = [row[0] for row in cursor.fetchall()]
                    text = "\n".join(plan)
                    planning = float(re.search(r"Planning Time: ([\d.]+)", text).group(1))
                    execution = float(re.search(r"Execution Time: ([\d.]+)", text).group(1))
                    timings.append((planning, execution))
                if "SKIP LOCKED" in sql and not claim_plan:
                    claim_plan = plan
                tables = re.findall(r'(?:FROM|JOIN) "(\w+)"', sql)
                rows.append(
                    {
                        "planning_ms": round(statistics.median(t[0] for t in timings), 2),
                        "execution_ms": round(statistics.median(t[1] for t in timings), 2),
                        "relations": len(tables),
                        "from": tables[0] if tables else "",
                        "sql": sql[:200],
                    }
                )
            statements[request] = rows
    return {"statements": statements, "claim_plan": claim_plan}


def print_explain(explained: dict) -> None:
    print()
    print("EXPLAIN ANALYZE of each SELECT of one claim, one render, one submit (median of 5):")
    print(f"{'request':8} {'planning':>9} {'execution':>10} {'rels':>5}  main table")
    for request, rows in explained["statements"].items():
        for row in rows:
            print(
                f"{request:8} {row['planning_ms']:>6.2f} ms {row['execution_ms']:>7.2f} ms "
                f"{row['relations']:>5}  {row['from']}"
            )
        planning = sum(row["planning_ms"] for row in rows)
        execution = sum(row["execution_ms"] for row in rows)
        print(f"{request:8} {planning:>6.2f} ms {execution:>7.2f} ms  total of {len(rows)} SELECTs")
    print()
    print("-- the claim's candidate query (SELECT ... FOR UPDATE SKIP LOCKED)")
    print("\n".join(explained["claim_plan"]))


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
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument(
        "--postgres",
        default=os.environ.get("BENCH_POSTGRES_URL", "postgres://postgres@127.0.0.1:5432/postgres"),
    )
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
        database_url = fresh_postgres(args.postgres)
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
