"""The pair browser at ten times MMRB2 on PostgreSQL: filter, search and sort, one page each.

usage: python -m bench.pair_browser [--postgres URL] [--pairs 40000] [--judges 23] [--repeat 5]
                                    [--explain] [--reuse] [--json]

Seeds a fresh database `arbiter_bench_pair_browser` in this process (Django set up on it,
REDIS_URL unset) with synthetic MMRB2-like data, bulk-created (the import's own pair text,
`content.search_text.pair_search_text`, so search reads what an import writes):
- `--pairs` pairs over four tasks; prompts of one paragraph from the bench vocabulary plus one
  of 2,000 rarer words ("kw0001"...), responses of 1 to 3 paragraphs (image parts by hash);
- 3 ratings on 80 % of the pairs by 30 annotators (derived columns by `pairs_decide`), 5 % of
  the pairs candidates; open flags on 0.5 %, adjudications on 0.75 %, gold checks 0.25 %;
- `--judges` judges × 2 orders over every decided pair (1,840,000 verdicts at 40,000 pairs).
Then precomputes the judges' disagreement sets (timed: what a finished run, an import or a
decision starts behind the pages) and times each scenario (a filter, a search, a sort) as a
lead's page through django.test.Client (the whole request: middleware, selectors, template):
the first view with the cache cleared, then `--repeat` views; the median, the slowest, the
query count and the number of matching pairs. Then a lead decides a pair and filters on "any
judge disagrees" at once: the time of that view (the last sets, said to be behind) and until
the refresh behind it made them current. The full CSV of a filtered view is timed too
(streamed, read to the end). Last, the images of the first page (50 rows, two responses each)
as a browser downloads them: their assets are made for this measure from MJ-Bench's 1024 px
photos (../shared/datasets/mjbench; synthetic 1024 px photos without it) and removed after;
the bytes of the full images (`asset-file`, what the rows used to load) against the
thumbnails (`asset-thumbnail`), and the time of the thumbnails' first requests (made and
stored) and of the next ones (read from storage), with the scope check's and the rendering's
share. The machine's load average is printed before and after.
Exit status 1 when a page's median is 300 ms or more or its query count
differs between page sizes 50 and 200.
--explain prints EXPLAIN ANALYZE of each scenario's page query; --reuse measures again on the
database the last run seeded (seeding 40,000 pairs and their verdicts takes minutes).
"""

import argparse
import io
import json
import os
import random
import re
import statistics
import sys
import tempfile
import time
from pathlib import Path

from bench.annotate_seed import WORDS
from bench.common import ROOT, add_postgres_argument, django_start, fresh_postgres, percentile

DB_NAME = "arbiter_bench_pair_browser"
TARGET_MS = 300.0
TASKS = ("t2i", "edit", "interleaved", "reasoning")
ANNOTATORS = 30
RARE_WORDS = 2000
BATCH = 5000
MJBENCH_PHOTOS = ROOT.parent / "shared" / "datasets" / "mjbench" / "quality" / "human"


def _paragraph(rng: random.Random) -> str:
    sentences = []
    for _ in range(rng.randint(2, 4)):
        text = " ".join(rng.choice(WORDS) for _ in range(rng.randint(8, 18)))
        sentences.append(text[0].upper() + text[1:] + ".")
    return " ".join(sentences)


def _sha(rng: random.Random) -> str:
    return f"{rng.getrandbits(256):064x}"


def seed(pairs: int, judges: int) -> dict:
    """The project, its pairs, ratings, flags, adjudications, gold checks and verdicts."""
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User
    from django.db import connection, transaction
    from django.utils import timezone

    from annotation.models import Adjudication, Assignment, Flag, GoldAnswer, Rating
    from annotation.services.consensus import pairs_decide
    from content.models import Generator, Pair, PairSearch, Prompt, Response
    from content.search_text import pair_search_text
    from judging.models import Judge
    from projects.models import Membership, Project, Task

    rng = random.Random("bench/pair-browser")
    started = time.perf_counter()
    project = Project.objects.create(
        slug="browse", name="Browse", scale_points=7, annotators_per_pair=3
    )
    tasks = [Task.objects.create(project=project, slug=s, name=s.title()) for s in TASKS]
    generators = [Generator.objects.create(name=f"gen-{n}") for n in range(6)]
    password = make_password("bench-pair-browser-pw")
    lead = User.objects.create(username="lead", password=password)
    Membership.objects.create(user=lead, project=project, role=Membership.Role.LEAD)
    annotators = User.objects.bulk_create(
        User(username=f"annotator{n:02d}", password=password) for n in range(1, ANNOTATORS + 1)
    )
    Membership.objects.bulk_create(
        Membership(user=u, project=project, role=Membership.Role.ANNOTATOR) for u in annotators
    )
    for start in range(0, pairs, BATCH):
        count = min(BATCH, pairs - start)
        prompts, responses, made = [], [], []
        for number in range(start, start + count):
            rare = f"kw{number % RARE_WORDS:04d}"
            prompts.append(
                Prompt(
                    project=project,
                    source=rng.choice(("arbiter-bench", "genai-arena", "mmrb2")),
                    content=[["text", f"{_paragraph(rng)} {rare}"], ["image", _sha(rng)]],
                    fingerprint=f"p{number}",
                )
            )
            for _ in range(2):
                parts = [["text", _paragraph(rng)] for _ in range(rng.randint(1, 3))]
                parts.append(["image", _sha(rng)])
                responses.append(Response(generator=rng.choice(generators), content=parts))
        Prompt.objects.bulk_create(prompts)
        Response.objects.bulk_create(responses)
        texts = []
        for offset, prompt in enumerate(prompts):
            number = start + offset
            a, b = responses[2 * offset], responses[2 * offset + 1]
            external_id = f"{TASKS[number % 4]}-{number:06d}"
            made.append(
                Pair(
                    project=project,
                    task=tasks[number % 4],
                    external_id=external_id,
                    prompt=prompt,
                    response_a=a,
                    response_b=b,
                    source=prompt.source,
                    status=Pair.Status.CANDIDATE if rng.random() < 0.05 else Pair.Status.QUEUED,
                    reference_label=rng.choice(("A", "B", "")),
                )
            )
            texts.append(
                pair_search_text(
                    external_id=external_id,
                    source=prompt.source,
                    prompt=prompt.content,
                    response_a=a.content,
                    response_b=b.content,
                )
            )
        Pair.objects.bulk_create(made)
        PairSearch.objects.bulk_create(
            [PairSearch(pair=pair, text=text) for pair, text in zip(made, texts, strict=True)]
        )
        print(f"  {start + count} pairs", flush=True)
    queued = list(
        Pair.objects.filter(project=project, status=Pair.Status.QUEUED).values_list("pk", flat=True)
    )
    rated = rng.sample(queued, int(pairs * 0.8))
    assignments = []
    for pair_id in rated:
        lean = rng.choice((2, 6))
        for user in rng.sample(annotators, 3):
            assignments.append((pair_id, user, max(1, min(7, lean + rng.randint(-2, 2)))))
    with transaction.atomic():
        for start in range(0, len(assignments), BATCH):
            chunk = assignments[start : start + BATCH]
            made_assignments = Assignment.objects.bulk_create(
                Assignment(pair_id=p, annotator=u, status=Assignment.Status.SUBMITTED)
                for p, u, _ in chunk
            )
            Rating.objects.bulk_create(
                Rating(assignment=a, pair_id=p, annotator=u, scale=7, overall=score)
                for a, (p, u, score) in zip(made_assignments, chunk, strict=True)
            )
    for start in range(0, len(rated), BATCH):
        pairs_decide(list(Pair.objects.filter(pk__in=rated[start : start + BATCH])), project)
    print(f"  {len(assignments)} ratings", flush=True)
    unrated = sorted(set(queued) - set(rated))
    for pair_id in rng.sample(unrated, pairs // 200):
        user = rng.choice(annotators)
        assignment = Assignment.objects.create(
            pair_id=pair_id, annotator=user, status=Assignment.Status.SKIPPED
        )
        Flag.objects.create(
            pair_id=pair_id, assignment=assignment, reported_by=user, reason="broken"
        )
    contested = list(Pair.objects.filter(pk__in=rng.sample(rated, pairs * 3 // 400)))
    Adjudication.objects.bulk_create(
        Adjudication(pair=p, lead=lead, decision=rng.choice(Adjudication.Decision.values))
        for p in contested
    )
    pairs_decide(contested, project)
    unflagged = set(unrated) - set(Flag.objects.values_list("pair_id", flat=True))
    gold = rng.sample(sorted(unflagged), pairs // 400)
    GoldAnswer.objects.bulk_create(
        GoldAnswer(pair_id=p, side="A", previous_status=Pair.Status.QUEUED) for p in gold
    )
    Pair.objects.filter(pk__in=gold).update(status=Pair.Status.GOLD)
    decided = list(
        Pair.objects.filter(project=project).exclude(label="").values_list("pk", "label")
    )
    verdicts = 0
    now = timezone.now()
    columns = 'judge_id, pair_id, "order", sample, choice, raw_output, error, created_at, '
    columns += "images_adapted, from_cache"
    for number in range(judges):
        judge = Judge.objects.create(name=f"judge-{number:02d}", backend="random", project=project)
        accuracy = rng.uniform(0.55, 0.85)
        # COPY, not bulk_create: 1.8 million rows in seconds rather than a quarter of an hour.
        with (
            connection.cursor() as cursor,
            cursor.copy(f"COPY judging_verdict ({columns}) FROM STDIN") as copy,
        ):
            for pair_id, label in decided:
                for order in ("forward", "reverse"):
                    right = rng.random() < accuracy
                    choice = label if right else {"A": "B", "B": "A"}[label]
                    copy.write_row((judge.pk, pair_id, order, 0, choice, "", "", now, "[]", False))
        verdicts += 2 * len(decided)
        print(f"  judge {number + 1}/{judges}: {verdicts} verdicts", flush=True)
    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")  # visibility map and statistics, as autovacuum would
    return {
        "pairs": Pair.objects.filter(project=project).count(),
        "ratings": Rating.objects.count(),
        "verdicts": verdicts,
        "seed_s": round(time.perf_counter() - started, 1),
    }


def scenarios(project) -> list[tuple[str, dict]]:
    from django.contrib.auth.models import User

    from judging.models import Judge

    annotator = User.objects.get(username="annotator07")
    judge = Judge.objects.filter(project=project).order_by("name")[0]
    return [
        ("all pairs, by id", {}),
        ("all pairs, last page", {"page": "800"}),
        ("sort: ratings, descending", {"sort": "ratings", "order": "desc"}),
        ("sort: span, descending", {"sort": "span", "order": "desc"}),
        ("sort: status", {"sort": "status"}),
        ("sort: created, descending", {"sort": "created", "order": "desc"}),
        ("filter: task + status", {"task": "edit", "status": "kept"}),
        ("filter: 3 ratings, span >= 4", {"ratings_min": "3", "ratings_max": "3", "span_min": "4"}),
        ("filter: consensus B", {"side": "B"}),
        ("filter: flagged", {"flagged": "yes"}),
        ("filter: gold", {"gold": "yes"}),
        ("filter: adjudicated", {"adjudicated": "yes"}),
        ("filter: not adjudicated, no flag", {"adjudicated": "no", "flagged": "no"}),
        ("filter: rated by one annotator", {"annotator": str(annotator.pk)}),
        ("filter: any judge disagrees", {"judge": "any"}),
        ("filter: one judge disagrees", {"judge": str(judge.pk)}),
        ("search: a common word", {"q": "circle"}),
        ("search: a rare word", {"q": "kw0042"}),
        ("search: two words", {"q": "red cube"}),
        ("search: an external id", {"q": "edit-000101"}),
        ("search + filter + sort", {"q": "arrow", "task": "t2i", "sort": "span", "order": "desc"}),
        ("everything at once", {
            "q": "chart", "task": "reasoning", "ratings_min": "3", "side": "A",
            "adjudicated": "no", "judge": "any", "sort": "ratings", "order": "desc",
        }),
    ]  # fmt: skip


def measure(args) -> dict:
    from urllib.parse import urlencode

    from django.contrib.auth.models import User
    from django.core.cache import cache
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext
    from django.urls import reverse

    from dashboards.selectors.pair_browser import browser_filters_parse, browser_form, browser_pairs
    from dashboards.snapshots import figures_refresh_run
    from projects.models import Project

    project = Project.objects.get(slug="browse")
    client = Client()
    client.force_login(User.objects.get(username="lead"))
    base = reverse("dash-pairs", args=[project.slug])
    # What a finished run, an import or a decision starts behind the pages (figures_prepare):
    # the judges' disagreement sets, precomputed.
    started = time.perf_counter()
    figures_refresh_run(project.pk, "disagreement")
    precomputed_s = round(time.perf_counter() - started, 2)
    print(f"judges' disagreement sets precomputed in {precomputed_s} s", flush=True)
    results = []
    for name, params in scenarios(project):
        url = f"{base}?{urlencode(params)}"
        cache.clear()  # the first view: nothing in the cache
        started = time.perf_counter()
        response = client.get(url)
        first_ms = (time.perf_counter() - started) * 1000
        if response.status_code != 200:
            sys.exit(f"{name}: HTTP {response.status_code}\n{response.content[:2000]!r}")
        times = []
        for _ in range(args.repeat):
            started = time.perf_counter()
            response = client.get(url)
            times.append((time.perf_counter() - started) * 1000)
        counts = {}
        for size in ("50", "200"):
            with CaptureQueriesContext(connection) as captured:
                client.get(f"{base}?{urlencode({**params, 'size': size})}")
            counts[size] = len(captured)
        form = browser_form(project, params)
        filters = browser_filters_parse(project, form, params.get("page", ""))
        matching = browser_pairs(project, filters).count()
        results.append(
            {
                "scenario": name,
                "first_ms": round(first_ms, 1),
                "median_ms": round(statistics.median(times), 1),
                "max_ms": round(max(times), 1),
                "p90_ms": round(percentile(times, 0.9), 1),
                "queries": counts["50"],
                "queries_200": counts["200"],
                "matching": matching,
            }
        )
        if args.explain:
            rows = browser_pairs(project, filters)[:50]
            sql, sql_params = rows.query.sql_with_params()
            with connection.cursor() as cursor:
                cursor.execute(f"EXPLAIN (ANALYZE, BUFFERS) {sql}", sql_params)
                plan = "\n".join(row[0] for row in cursor.fetchall())
            print(f"\n== {name}\n{plan}", flush=True)
    after_change = _after_a_decision(client, project, f"{base}?{urlencode({'judge': 'any'})}")
    csv_params = {"task": "t2i", "adjudicated": "no", "format": "csv"}
    started = time.perf_counter()
    download = client.get(f"{base}?{urlencode(csv_params)}")
    chunks = download.streaming_content  # type: ignore[attr-defined]
    csv_bytes = sum(len(chunk) for chunk in chunks)
    csv_ms = (time.perf_counter() - started) * 1000
    csv = {"params": csv_params, "ms": round(csv_ms), "bytes": csv_bytes}
    return {
        "disagreement_precomputed_s": precomputed_s,
        "after_a_decision": after_change,
        "pages": results,
        "csv": csv,
        "images": _page_images(client, project, base),
    }


def _photos(count: int) -> tuple[str, list[bytes]]:
    """`count` 1024 px photos: MJ-Bench's when ../shared has them, else synthetic ones."""
    files = sorted(MJBENCH_PHOTOS.glob("examples_human/*.jpg"))
    if files:
        return "MJ-Bench", [files[n % len(files)].read_bytes() for n in range(count)]
    from PIL import Image

    photos = []
    for n in range(count):
        noise = Image.effect_noise((1024, 1024), 30 + n % 20)
        buffer = io.BytesIO()
        Image.merge("RGB", (noise, noise.rotate(90), noise.rotate(180))).save(
            buffer, "JPEG", quality=85
        )
        photos.append(buffer.getvalue())
    return "synthetic", photos


def _page_images(client, project, base: str) -> dict:
    """The first page's images as its rows load them: full images against thumbnails."""
    from django.contrib.auth.models import User

    from annotation.selectors.assets import asset_for_user
    from content.image_cleaning import clean_asset_name, clean_copy_make
    from content.models import Asset, Pair
    from content.models.prompt import asset_storage_name
    from content.thumbnails import thumbnail_bytes
    from core.media_store import media_store

    pairs = Pair.objects.filter(project=project).order_by("pk")[:50]
    shas = [
        next(value for kind, value in response.content if kind == "image")
        for pair in pairs.select_related("response_a", "response_b")
        for response in (pair.response_a, pair.response_b)
    ]
    source, photos = _photos(len(shas))
    store = media_store()
    for sha, data in zip(shas, photos, strict=True):
        name = asset_storage_name(sha, "JPEG")
        store.put_bytes(name, data)
        Asset.objects.update_or_create(
            sha256=sha,
            defaults={"file": name, "format": "JPEG", "width": 1024, "height": 1024,
                      "size_bytes": len(data)},
        )  # fmt: skip
        clean_copy_make(sha, name)  # as the import does
    try:
        page = client.get(base).content.decode()
        thumbs = re.findall(r'<img src="(/assets/[0-9a-f]{64}/thumb)"', page)
        if len(thumbs) != len(shas):
            sys.exit(f"the first page shows {len(thumbs)} thumbnails, not {len(shas)}")

        def fetch(urls: list[str]) -> tuple[int, list[float]]:
            total, times = 0, []
            for url in urls:
                started = time.perf_counter()
                response = client.get(url)
                total += sum(len(chunk) for chunk in response.streaming_content)
                times.append((time.perf_counter() - started) * 1000)
                if response.status_code != 200:
                    sys.exit(f"{url}: HTTP {response.status_code}")
            return total, times

        full_bytes, full_ms = fetch([url.removesuffix("/thumb") for url in thumbs])
        thumb_bytes, first_ms = fetch(thumbs)
        stored_bytes, stored_ms = fetch(thumbs)
        # Where a request's time goes: the scope check alone, and a thumbnail's rendering
        # alone (decode, resample, encode; no storage).
        lead = User.objects.get(username="lead")
        scope_ms, render_ms = [], []
        for sha in shas:
            started = time.perf_counter()
            asset_for_user(lead, sha)
            scope_ms.append((time.perf_counter() - started) * 1000)
            with store.local_copy(clean_asset_name(sha, asset_storage_name(sha, "JPEG"))) as path:
                started = time.perf_counter()
                thumbnail_bytes(path)
                render_ms.append((time.perf_counter() - started) * 1000)
    finally:
        Asset.objects.filter(sha256__in=shas).delete()  # the seeded database as it was
    return {
        "source": source,
        "images": len(thumbs),
        "full_bytes": full_bytes,
        "thumbnail_bytes": thumb_bytes,
        "stored_bytes": stored_bytes,
        "full_median_ms": round(statistics.median(full_ms), 2),
        "thumbnail_first_median_ms": round(statistics.median(first_ms), 2),
        "thumbnail_first_max_ms": round(max(first_ms), 2),
        "thumbnail_stored_median_ms": round(statistics.median(stored_ms), 2),
        "scope_check_median_ms": round(statistics.median(scope_ms), 2),
        "render_median_ms": round(statistics.median(render_ms), 2),
    }


def _after_a_decision(client, project, url: str, deadline_s: float = 120.0) -> dict:
    """A lead decides a pair, then filters on "any judge disagrees": the last sets show at once
    (said to be behind) while their refresh runs in a thread; how long until it is current."""
    from django.contrib.auth.models import User

    from annotation.services.adjudication import pair_adjudicate
    from content.models import Pair
    from dashboards.models import FigureSnapshot
    from dashboards.snapshots import data_version

    pair = Pair.objects.filter(project=project, label="A").order_by("pk").first()
    pair_adjudicate(pair.pk, User.objects.get(username="lead"), "keep_b", "bench: a decision")
    started = time.perf_counter()
    response = client.get(url)
    view_ms = (time.perf_counter() - started) * 1000
    behind = b"verdicts as of" in response.content
    version = data_version(project)
    while time.perf_counter() - started < deadline_s:
        row = FigureSnapshot.objects.get(project=project, page="disagreement")
        if row.version == version and row.refreshing_since is None:
            break
        time.sleep(0.2)  # polling the refresh thread's row, with a deadline
    refreshed_s = time.perf_counter() - started
    return {
        "view_ms": round(view_ms, 1),
        "said_behind": behind,
        "current_after_s": round(refreshed_s, 1),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_postgres_argument(parser)
    parser.add_argument("--pairs", type=int, default=40_000)
    parser.add_argument("--judges", type=int, default=23)
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--explain", action="store_true")
    parser.add_argument(
        "--reuse", action="store_true", help=f"measure again on {DB_NAME} as last seeded"
    )
    parser.add_argument("--json", action="store_true")
    args = parser.parse_args()
    work = Path(tempfile.mkdtemp(prefix="arbiter-bench-pair-browser-"))
    if args.reuse:  # the database a previous run seeded (its sizes, whatever the arguments)
        admin, _, _ = args.postgres.rpartition("/")
        django_start(f"{admin}/{DB_NAME}", work)
        seeded = {"reused": DB_NAME}
    else:
        django_start(fresh_postgres(args.postgres, DB_NAME), work)
        print(f"seeding {args.pairs} pairs, {args.judges} judges", flush=True)
        seeded = seed(args.pairs, args.judges)
        print(f"seeded: {seeded}", flush=True)
    load_before = os.getloadavg()
    figures = measure(args)
    figures["seed"] = seeded
    figures["load_average"] = {"before": load_before, "after": os.getloadavg()}
    figures["at"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    if args.json:
        print(json.dumps(figures, indent=2))
    else:
        head = f"{'scenario':<36} {'first':>9} {'median':>9} {'max':>9} {'queries':>8}"
        print(f"\n{head} {'matching':>9}")
        for row in figures["pages"]:
            print(
                f"{row['scenario']:<36} {row['first_ms']:>6} ms {row['median_ms']:>6} ms "
                f"{row['max_ms']:>6} ms {row['queries']:>8} {row['matching']:>9}"
            )
        csv = figures["csv"]
        print(f"\nCSV of {csv['params']}: {csv['ms']} ms, {csv['bytes']} bytes")
        change = figures["after_a_decision"]
        print(
            f"judges' sets precomputed in {figures['disagreement_precomputed_s']} s; after a "
            f'decision, "any judge disagrees" answered in {change["view_ms"]} ms (said to be '
            f"behind: {change['said_behind']}), current again after {change['current_after_s']} s"
        )
        images = figures["images"]
        print(
            f"first page's {images['images']} images ({images['source']} photos): full "
            f"{images['full_bytes']:,} bytes, thumbnails {images['thumbnail_bytes']:,} bytes; "
            f"a thumbnail's first request {images['thumbnail_first_median_ms']} ms median "
            f"(max {images['thumbnail_first_max_ms']} ms), stored "
            f"{images['thumbnail_stored_median_ms']} ms (a full image "
            f"{images['full_median_ms']} ms); of which the scope check "
            f"{images['scope_check_median_ms']} ms, a thumbnail's rendering "
            f"{images['render_median_ms']} ms (medians)"
        )
        load = figures["load_average"]
        print(
            f"{figures['at']}; load average (1, 5, 15 min) before "
            f"{', '.join(f'{v:.2f}' for v in load['before'])}, after "
            f"{', '.join(f'{v:.2f}' for v in load['after'])}"
        )
    slow = [row["scenario"] for row in figures["pages"] if row["median_ms"] >= TARGET_MS]
    if figures["after_a_decision"]["view_ms"] >= TARGET_MS:
        slow.append("any judge disagrees, after a decision")
    grew = [row["scenario"] for row in figures["pages"] if row["queries"] != row["queries_200"]]
    if slow or grew:
        print(f"over {TARGET_MS:.0f} ms: {slow}; query count depends on the page size: {grew}")
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
