"""EXPLAIN ANALYZE of the annotate requests (`python -m bench.annotate --explain`).

Takes every SELECT that one claim, one render and one submit send, with their literals, from
the real requests and shows where the database time goes: planning or execution.
"""

import random
import re
import statistics

from bench.annotate_seed import PROJECT, rating_form


def explain_requests(repeat: int = 5) -> dict:
    """Medians of `repeat` EXPLAIN ANALYZE runs of each SELECT of one claim, one render and
    one submit; the full plan of the claim's candidate query."""
    from django.contrib.auth.models import User
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from projects.models import Task

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
    form = rating_form(random.Random(1), task)
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
