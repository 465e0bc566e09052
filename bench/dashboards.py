"""The lead's dashboards at MMRB2 scale on PostgreSQL: first (uncached) and cached views.

usage: python -m bench.dashboards [--postgres URL] [--repeat 3] [--tasks TASK ...] [--judges 23]
                                  [--scale N] [--profile] [--json]

Seeds a fresh database `arbiter_bench_dashboards` in this process (Django set up on it, REDIS_URL
unset, so the cache is local memory):
- the four real MMRB2 release files (../shared/datasets/mmrb2, placeholder images): 4,000
  pairs, 9,000 imported ratings (t2i, edit, interleaved: 3 pairwise scores each; reasoning
  pairs carry per-response grades, no pairwise scores), then 3 ratings with aspect scores on
  each reasoning pair by 6 real annotator accounts: 12,000 ratings, 3 per pair;
  without ../shared, 4,000 synthetic pairs rated 3 times each (bench.annotate_seed);
- 23 judges × 2 orders × 1 sample over every pair: 184,000 verdicts (bulk-created; per-judge
  accuracy, position bias, ties, invalid answers and failed calls from a seeded RNG; raw
  outputs of MMRB2-like length), one finished run per judge;
- a lead (the client), a few flags and adjudications.
--scale 10: ten times MMRB2 (the targets' size), synthetic: 40,000 pairs rated 3 times
(120,000 ratings) and 23 judges × 2 orders = 1,840,000 verdicts.
The agreement, judges and models pages are served from precomputed figures
(dashboards/snapshots.py): the bench first runs their background refresh itself, timed. Then
times each page with django.test.Client: the first view (cache cleared) and a second view,
--repeat times, with the query count (CaptureQueriesContext). Then adds 3 judges' verdicts
(24,000) and 500 ratings (2 new annotators among them), times one view of each precomputed page
while its figures are stale (what the lead sees before the refresh ends), refreshes them, and
measures again: the query counts must not grow with the data.
Exit status 1 when a first or stale view takes 500 ms or more, a second view 100 ms or more
(the targets), a page's query count grew or a page fails (its error is shown in the
table, the other pages are still measured).
--profile: cProfile of each page's selector and EXPLAIN ANALYZE of its slowest SELECTs (done
anyway for a page that misses the target). A quick run: --tasks reasoning --judges 1 (the
reasoning set has the annotator ratings and dropped pairs of a full run; t2i alone has no
dropped pair before the growth step, whose first ones add a query).
"""

import argparse
import cProfile
import io
import json
import logging
import pstats
import random
import re
import statistics
import sys
import tempfile
import time
import traceback
from pathlib import Path

from bench.common import (
    ROOT,
    add_postgres_argument,
    add_tasks_argument,
    django_start,
    fresh_postgres,
)
from bench.dashboards_seed import DB_NAME, EXTRA_JUDGES, JUDGES, grow, seed_all

TARGET_MS = 500.0  # every lead page's first view
SECOND_TARGET_MS = 100.0  # ... and a repeated view
AFTER_IMPORT_TARGET_MS = 1000.0  # the first view after an import
PAGES = ("overview", "agreement", "disagreements", "judges", "models", "pair")
# Served from precomputed figures (dashboards/snapshots.py); the others compute on every view.
CACHED_PAGES = {"agreement", "judges", "models"}


# ---------------------------------------------------------------- precomputed figures


def refreshes_by_hand():
    """The bench runs the background refreshes itself (timed, one at a time), so that no
    refresh thread competes with the views it measures."""
    from dashboards import snapshots

    requested = []
    snapshots.refresh_request = lambda project, page: requested.append(page)
    return requested


def refresh_all(project) -> dict[str, float]:
    """Recompute every precomputed page's figures (what the background refresh does after the
    data changed): seconds per page."""
    from dashboards.snapshots import figures_refresh_run

    took = {}
    for page in sorted(CACHED_PAGES):
        started = time.perf_counter()
        figures_refresh_run(project.pk, page)
        took[page] = round(time.perf_counter() - started, 2)
        print(f"  refreshed {page} in {took[page]} s", flush=True)
    return took


def first_views_after_import(client, project, urls: dict[str, str]) -> dict[str, float]:
    """What a lead sees right after the import: the import's event has started the figures'
    background refresh (dashboards/snapshots.py::figures_prepare; here recorded, not run), so
    each precomputed page answers at once that its figures are on their way. ms per page."""
    from core import outbox
    from dashboards.snapshots import figures_prepare

    real_start, outbox._thread_start = outbox._thread_start, lambda task, *args: None
    try:
        figures_prepare(project)
    finally:
        outbox._thread_start = real_start
    return {page: round(_timed(client, urls[page])["ms"], 1) for page in sorted(CACHED_PAGES)}


# ---------------------------------------------------------------- measuring


def page_urls(slug: str, pair_id: int) -> dict[str, str]:
    from django.urls import reverse

    return {
        "overview": reverse("dash-overview", args=[slug]),
        "agreement": reverse("dash-agreement", args=[slug]),
        "disagreements": reverse("dash-disagreements", args=[slug]),
        "judges": reverse("dash-judges", args=[slug]),
        "models": reverse("dash-models", args=[slug]),
        "pair": reverse("dash-pair", args=[slug, pair_id]),
    }


def probe_pair(project) -> int:
    """The pair page measured: the most contested pair (top of the disagreement queue)."""
    from dashboards.selectors.disagreements import disagreements

    return disagreements(project)["pairs"][0].pk


def _ours(filename: str) -> bool:
    return filename.startswith(str(ROOT)) and "/.venv/" not in filename


def _timed(client, url: str) -> dict:
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        response = client.get(url)
        ms = (time.perf_counter() - started) * 1000
    if response.status_code != 200:
        raise RuntimeError(f"HTTP {response.status_code}")
    return {
        "ms": ms,
        "queries": len(captured),
        "sql_ms": sum(float(q["time"]) for q in captured.captured_queries) * 1000,
        "sqls": [(float(q["time"]), q["sql"]) for q in captured.captured_queries],
    }


def measure(client, urls: dict[str, str], repeat: int) -> dict:
    """Per page: `repeat` × (cache cleared, first view, second view). A page that fails is a
    row with its error (the other pages are still measured)."""
    from django.core.cache import cache

    results = {}
    for page, url in urls.items():
        firsts, seconds = [], []
        try:
            for _ in range(repeat):
                cache.clear()
                firsts.append(_timed(client, url))
                seconds.append(_timed(client, url))
        except Exception as exc:  # reported in the table; exit status 1
            frames = traceback.extract_tb(exc.__traceback__)
            ours = [f for f in frames if _ours(f.filename)]
            where = (ours or frames)[-1]
            results[page] = {
                "url": url,
                "cached": page in CACHED_PAGES,
                "error": f"{type(exc).__name__}: {exc} ({where.filename}:{where.lineno})",
                "_sqls": [],
            }
            continue
        slowest = max(firsts, key=lambda s: s["ms"])
        results[page] = {
            "url": url,
            "cached": page in CACHED_PAGES,
            "first_ms": [round(s["ms"], 1) for s in firsts],
            "first_median_ms": round(statistics.median(s["ms"] for s in firsts), 1),
            "first_max_ms": round(slowest["ms"], 1),
            "first_sql_ms": round(statistics.median(s["sql_ms"] for s in firsts), 1),
            "second_median_ms": round(statistics.median(s["ms"] for s in seconds), 1),
            "second_sql_ms": round(statistics.median(s["sql_ms"] for s in seconds), 1),
            "queries_first": sorted({s["queries"] for s in firsts}),
            "queries_second": sorted({s["queries"] for s in seconds}),
            "_sqls": slowest["sqls"],
        }
    return results


# ---------------------------------------------------------------- profiling


def selector_call(page: str, project, pair_id: int):
    from dashboards.selectors.agreement import agreement
    from dashboards.selectors.disagreements import disagreements, pair_review
    from dashboards.selectors.judges import judge_figures
    from dashboards.selectors.models import model_figures
    from dashboards.selectors.overview import overview

    return {
        "overview": lambda: overview(project),
        "agreement": lambda: agreement(project),
        "disagreements": lambda: disagreements(project),
        "judges": lambda: judge_figures(project),
        "models": lambda: model_figures(project),
        "pair": lambda: pair_review(project, pair_id),
    }[page]


def profile(page: str, project, pair_id: int, sqls: list[tuple[float, str]]) -> dict:
    """cProfile of the page's selector (top functions by own time and by cumulative time) and
    EXPLAIN ANALYZE of the three slowest SELECTs of the request (`sqls`) and the selector."""
    from django.db import connection
    from django.test.utils import CaptureQueriesContext

    call = selector_call(page, project, pair_id)
    started = time.perf_counter()
    call()
    plain_ms = (time.perf_counter() - started) * 1000
    profiler = cProfile.Profile()
    connection.queries_log.clear()
    with CaptureQueriesContext(connection) as captured:
        started = time.perf_counter()
        profiler.runcall(call)
        profiled_ms = (time.perf_counter() - started) * 1000
    selector_sql_ms = sum(float(q["time"]) for q in captured.captured_queries) * 1000
    stats = {}
    for key in ("tottime", "cumulative"):
        out = io.StringIO()
        pstats.Stats(profiler, stream=out).sort_stats(key).print_stats(14)
        text = out.getvalue()
        stats[key] = text[text.find("   ncalls") :].rstrip()
    slowest: dict[str, float] = {}
    for seconds, sql in [*sqls, *((float(q["time"]), q["sql"]) for q in captured)]:
        if sql.lstrip().upper().startswith("SELECT"):
            slowest[sql] = max(seconds, slowest.get(sql, 0.0))
    plans = []
    with connection.cursor() as cursor:
        for sql, seconds in sorted(slowest.items(), key=lambda item: -item[1])[:3]:
            cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}")
            plan = "\n".join(row[0] for row in cursor.fetchall())
            execution = re.search(r"Execution Time: ([\d.]+)", plan)
            plans.append(
                {
                    "captured_ms": round(seconds * 1000, 1),
                    "execution_ms": float(execution.group(1)) if execution else None,
                    "sql": sql,
                    "plan": plan,
                }
            )
    return {
        "selector_ms": round(plain_ms, 1),
        "profiled_ms": round(profiled_ms, 1),
        "selector_sql_ms": round(selector_sql_ms, 1),
        "selector_queries": len(captured),
        "stats": stats,
        "explain": plans,
    }


def print_profile(page: str, found: dict) -> None:
    print(
        f"\n=== {page}: selector {found['selector_ms']} ms ({found['profiled_ms']} ms under "
        f"cProfile), {found['selector_queries']} queries, {found['selector_sql_ms']} ms of SQL"
    )
    print("--- by own time")
    print(found["stats"]["tottime"])
    print("--- by cumulative time")
    print(found["stats"]["cumulative"])
    for plan in found["explain"]:
        print(f"--- SELECT of {plan['captured_ms']} ms in the request: {plan['sql'][:300]}")
        print(plan["plan"])


# ---------------------------------------------------------------- report


def print_table(base: dict, grown: dict, seeded: dict, grew: dict) -> None:
    print()
    print(
        f"{seeded['pairs']:,} pairs, {seeded['ratings']:,} ratings, {seeded['verdicts']:,} "
        f"verdicts ({seeded['judges']} judges); after growth: +{grew['verdicts']:,} verdicts "
        f"({EXTRA_JUDGES} judges), +{grew['ratings']} ratings"
    )
    head = (
        f"{'page':14} {'first ms':>9} {'(max)':>8} {'sql ms':>7} {'second ms':>10} "
        f"{'cache':>5}  {'queries 1st/2nd':>15}  {'after growth':>12}  {'grown 1st ms':>12}"
    )
    print(head)
    print("-" * len(head))
    for page, row in base.items():
        after = grown[page]
        if "error" in row or "error" in after:
            print(f"{page:14} ERROR {row.get('error') or after.get('error')}")
            continue
        counts = f"{_q(row['queries_first'])}/{_q(row['queries_second'])}"
        counts_after = f"{_q(after['queries_first'])}/{_q(after['queries_second'])}"
        print(
            f"{page:14} {row['first_median_ms']:>9.1f} {row['first_max_ms']:>8.1f} "
            f"{row['first_sql_ms']:>7.1f} {row['second_median_ms']:>10.1f} "
            f"{'yes' if row['cached'] else 'no':>5}  {counts:>15}  {counts_after:>12}  "
            f"{after['first_median_ms']:>12.1f}"
        )


def _q(counts: list[int]) -> str:
    return ",".join(str(c) for c in counts)


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    add_postgres_argument(parser)
    parser.add_argument("--repeat", type=int, default=3, help="first + cached views per page")
    add_tasks_argument(parser)
    parser.add_argument("--judges", type=int, default=JUDGES, help=f"seeded judges ({JUDGES})")
    parser.add_argument("--profile", action="store_true", help="profile every page")
    parser.add_argument(
        "--scale",
        type=int,
        default=1,
        help="times MMRB2's size (10: 40,000 synthetic pairs, 120,000 ratings, 1.84 M verdicts)",
    )
    parser.add_argument("--json", action="store_true")
    options = parser.parse_args()

    work = Path(tempfile.mkdtemp(prefix="arbiter-bench-dashboards-"))
    django_start(fresh_postgres(options.postgres, DB_NAME), work)
    from django.conf import settings
    from django.contrib.auth.models import User
    from django.test import Client

    from projects.models import Project

    assert settings.DATABASES["default"]["NAME"] == DB_NAME
    assert settings.CACHES["default"]["BACKEND"].endswith("LocMemCache")
    rng = random.Random("bench/dashboards")
    seeded = seed_all(work, rng, tasks=options.tasks, judges=options.judges, scale=options.scale)
    print(f"seeded in {seeded['seed_s']} s: {json.dumps(seeded)}", flush=True)

    project = Project.objects.get(slug=seeded["project"])
    pair_id = probe_pair(project)
    urls = page_urls(project.slug, pair_id)
    client = Client()
    client.force_login(User.objects.get(username="lead"))
    # A failing page is reported in the table; Django's traceback logging would only repeat it.
    logging.getLogger("django.request").setLevel(logging.CRITICAL)
    print(f"measuring {len(urls)} pages × {options.repeat} ...", flush=True)
    requested = refreshes_by_hand()
    after_import = first_views_after_import(client, project, urls)
    print(f"first views after the import, figures on their way: {after_import}", flush=True)
    print("precomputing the figures ...", flush=True)
    refresh = refresh_all(project)
    base = measure(client, urls, options.repeat)
    print("growing the data ...", flush=True)
    grew = grow(project, rng)
    project.refresh_from_db()
    # Right after the change, before the refresh: the lead sees the last figures at once.
    stale = {page: _timed(client, urls[page]) for page in sorted(CACHED_PAGES)}
    stale_ms = {page: round(found["ms"], 1) for page, found in stale.items()}
    print(f"stale views (refresh requested: {sorted(set(requested))}): {stale_ms}", flush=True)
    refresh_grown = refresh_all(project)
    grown = measure(client, urls, options.repeat)

    failed = [page for page in base if "error" in base[page] or "error" in grown[page]]
    measured = [page for page in base if page not in failed]
    missed = [
        page
        for page in measured
        if max(base[page]["first_max_ms"], grown[page]["first_max_ms"]) >= TARGET_MS
        or max(base[page]["second_median_ms"], grown[page]["second_median_ms"]) >= SECOND_TARGET_MS
        or stale_ms.get(page, 0) >= TARGET_MS
        or after_import.get(page, 0) >= AFTER_IMPORT_TARGET_MS
    ]
    growing = [
        p
        for p in measured
        if max(grown[p]["queries_first"]) > max(base[p]["queries_first"])
        or max(grown[p]["queries_second"]) > max(base[p]["queries_second"])
    ]
    profiles = {}
    for page in PAGES if options.profile else [*missed, *failed]:
        profiles[page] = profile(page, project, pair_id, grown[page]["_sqls"])

    for rows in (base, grown):
        for row in rows.values():
            row.pop("_sqls")
    result = {
        "seeded": seeded,
        "grown": grew,
        "target_ms": TARGET_MS,
        "second_target_ms": SECOND_TARGET_MS,
        "refresh_s": refresh,
        "refresh_after_growth_s": refresh_grown,
        "stale_view_ms": stale_ms,
        "first_view_after_import_ms": after_import,
        "pages": base,
        "pages_after_growth": grown,
        "failed": failed,
        "missed": missed,
        "query_count_grew": growing,
        "profiles": profiles,
        "database": DB_NAME,
    }
    if options.json:
        print(json.dumps(result, indent=2, default=str))
    for page, found in profiles.items():
        print_profile(page, found)
    print_table(base, grown, seeded, grew)
    print(
        f"first view: median and max of {options.repeat} (cache cleared each time); second "
        "view: median; sql ms: database time of the first view"
    )
    print(
        f"precomputed pages: background refresh {refresh} s, after growth {refresh_grown} s; "
        f"a view while stale (before its refresh) {stale_ms} ms; the first view after the "
        f"import, figures on their way, {after_import} ms (target < {AFTER_IMPORT_TARGET_MS:.0f})"
    )
    verdict = "OK" if not (missed or growing or failed) else "MISSED"
    print(
        f"target: every first view < {TARGET_MS:.0f} ms and second view < "
        f"{SECOND_TARGET_MS:.0f} ms, query counts constant: {verdict}"
        + (f" (slow: {', '.join(missed)})" if missed else "")
        + (f" (queries grew: {', '.join(growing)})" if growing else "")
        + (f" (failed: {', '.join(failed)})" if failed else "")
    )
    return 0 if verdict == "OK" else 1


if __name__ == "__main__":
    sys.exit(main())
