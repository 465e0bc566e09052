"""Seeding of the dashboards benchmark (bench.dashboards): a fresh PostgreSQL database and
MMRB2-scale data (the real MMRB2 files where present): 4,000 pairs, 12,000 ratings, 23 judges ×
2 orders = 184,000 verdicts, a lead, flags and adjudications; and the growth step that checks
query counts do not grow with the data."""

import json
import random
import time
from datetime import timedelta
from pathlib import Path

from bench.annotate_seed import PROJECT, WORDS, seed
from bench.common import MMRB2, MMRB2_TASKS, placeholder_images

DB_NAME = "arbiter_bench_dashboards"
TASKS = tuple(MMRB2_TASKS)
JUDGES = 23
ANNOTATORS = 6
EXTRA_JUDGES = 3
EXTRA_RATINGS = 500


# ---------------------------------------------------------------- database


def analyze() -> None:
    """What autovacuum does within minutes of a bulk change: planner statistics, and the dead
    row versions the seeding's updates left (each rating rewrites its pair's row: without
    this the pairs' table is five times its size and no index-only scan is possible)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute("VACUUM ANALYZE")


# ---------------------------------------------------------------- seeding: pairs and ratings


def seed_mmrb2(work: Path, tasks=TASKS) -> str:
    """The release files of `tasks` with placeholder images, as bench.importing imports
    them."""
    from imports.services.pair_import import pairs_import

    images = placeholder_images(work / "images", tasks)
    for task in tasks:
        summary = pairs_import(
            MMRB2 / f"{task}_response_only.json",
            project_slug="mmrb2",
            task_slug=task,
            file_format="mmrb2",
            images_dir=images,
        )
        print(f"  {task}: {summary.as_dict()['pairs']} pairs imported", flush=True)
    return "mmrb2"


def seed_synthetic(work: Path, tasks=TASKS, scale: int = 1) -> str:
    """Without ../shared (or at a scale above MMRB2's): 1,000 × `scale` synthetic pairs per
    task, every one rated by 3 of 30 annotators."""
    seed(work, annotators=30, prefill=1.0, tasks=tasks, pairs_per_task=1000 * scale)
    return PROJECT


def _score(rng: random.Random, side: str, scale: int) -> int:
    """A canonical overall score leaning to `side` (above the centre = A better)."""
    low, high = (scale // 2 + 1, scale) if side == "A" else (1, (scale + 1) // 2)
    return rng.randint(low, high)


def add_ratings(project, pairs: list, users: list, per_pair: int, rng: random.Random) -> int:
    """`per_pair` ratings (aspect scores included) on each pair by users who have not rated it,
    mostly on the side of the pair's label, spread over six weeks; derived columns updated."""
    from django.utils import timezone

    from annotation.models import AspectScore, Assignment, Rating
    from annotation.services.consensus import pairs_decide
    from annotation.services.throughput import annotator_days_rebuild

    scale, now = project.scale_points, timezone.now()
    taken = set(Rating.objects.filter(pair__in=pairs).values_list("pair_id", "annotator_id")) | set(
        Assignment.objects.filter(pair__in=pairs).values_list("pair_id", "annotator_id")
    )
    assignments, planned = [], []
    for pair in pairs:
        free = [u for u in users if (pair.id, u.id) not in taken]
        truth = pair.label or rng.choice("AB")
        for user in rng.sample(free, min(per_pair, len(free))):
            side = truth if rng.random() < 0.8 else ("B" if truth == "A" else "A")
            when = now - timedelta(days=rng.uniform(0, 42) if rng.random() > 0.05 else 0)
            assignments.append(
                Assignment(
                    pair=pair,
                    annotator=user,
                    swapped=rng.random() < 0.5,
                    status=Assignment.Status.SUBMITTED,
                    submitted_at=when,
                )
            )
            planned.append((pair, user, _score(rng, side, scale), when))
    Assignment.objects.bulk_create(assignments, batch_size=1000)
    ratings = Rating.objects.bulk_create(
        [
            Rating(
                assignment=a,
                pair=pair,
                annotator=user,
                scale=scale,
                overall=overall,
                active_seconds=rng.uniform(20, 400),
                rationale=" ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 30))),
            )
            for a, (pair, user, overall, _when) in zip(assignments, planned, strict=True)
        ],
        batch_size=1000,
    )
    for rating, (*_rest, when) in zip(ratings, planned, strict=True):
        rating.created_at = when  # auto_now_add set "now" on insert; bulk_update keeps this
    Rating.objects.bulk_update(ratings, ["created_at"], batch_size=1000)
    aspects = {task.pk: [a["key"] for a in task.aspects] for task in project.tasks.all()}
    AspectScore.objects.bulk_create(
        [
            AspectScore(
                rating=rating,
                aspect=key,
                scale=scale,
                score=min(scale, max(1, rating.overall + rng.choice((-1, 0, 0, 1)))),
            )
            for rating, (pair, *_rest) in zip(ratings, planned, strict=True)
            for key in aspects[pair.task_id]
        ],
        batch_size=2000,
    )
    pairs_decide(list(project.pairs.filter(pk__in=[p.pk for p in pairs])), project)
    annotator_days_rebuild(project)  # the overview's throughput, as the service counts it
    return len(ratings)


def make_users(project, names: list[str], role: str) -> list:
    from django.contrib.auth.hashers import make_password
    from django.contrib.auth.models import User

    from projects.models import Membership

    password = make_password("bench-dashboards-pw")  # hashed once
    users = User.objects.bulk_create(User(username=name, password=password) for name in names)
    Membership.objects.bulk_create(Membership(user=u, project=project, role=role) for u in users)
    return users


def add_flags_and_adjudications(project, lead, annotators, rng: random.Random) -> dict:
    """20 open flags (skipped assignments) and 10 decisions of the lead on contested pairs."""
    from annotation.models import Adjudication, Assignment, Flag
    from annotation.services.consensus import pairs_decide
    from content.models import Pair

    rated = set(
        Assignment.objects.filter(pair__project=project).values_list("pair_id", "annotator_id")
    )
    ids = list(Pair.objects.filter(project=project).values_list("id", flat=True))
    flags = []
    for pair_id in rng.sample(ids, 60):
        user = rng.choice(annotators)
        if (pair_id, user.id) in rated or len(flags) == 20:
            continue
        rated.add((pair_id, user.id))
        assignment = Assignment.objects.create(
            pair_id=pair_id, annotator=user, status=Assignment.Status.SKIPPED, skip_reason="flag"
        )
        flags.append(
            Flag(
                pair_id=pair_id,
                assignment=assignment,
                reported_by=user,
                reason=rng.choice(Flag.Reason.values),
                note="placeholder image instead of the real one",
            )
        )
    Flag.objects.bulk_create(flags)
    contested = list(
        Pair.objects.filter(project=project, status=Pair.Status.DROPPED).order_by("id")[:10]
    )
    Adjudication.objects.bulk_create(
        Adjudication(
            pair=pair,
            lead=lead,
            decision=rng.choice(Adjudication.Decision.values),
            note="read both responses again",
        )
        for pair in contested
    )
    pairs_decide(contested, project)
    return {"flags": len(flags), "adjudications": len(contested)}


# ---------------------------------------------------------------- seeding: judges and verdicts


def _analyses(rng: random.Random, count: int = 300) -> list[str]:
    """MMRB2-like judge analyses, 600 to 1,800 characters (raw outputs are stored in full)."""
    texts = []
    for _ in range(count):
        words, text = [], 0
        target = rng.randint(600, 1800)
        while text < target:
            word = rng.choice(WORDS)
            words.append(word)
            text += len(word) + 1
        texts.append(" ".join(words))
    return texts


def add_judges(project, names: list[str], lead, rng: random.Random) -> int:
    """Per judge: one finished run over every pair of the project, forward and reverse, one
    sample; chunks of 1,000 pairs with their tallies."""
    from django.utils import timezone

    from content.models import Pair
    from judging.models import Judge, JudgeRun, JudgeRunChunk, Verdict
    from judging.services.judges import connection_save

    connection, _ = connection_save(
        "bench-offline", backend="openai", base_url="http://127.0.0.1:9/v1", projects=[project]
    )
    pairs = list(Pair.objects.filter(project=project).order_by("id").values_list("id", "label"))
    analyses = _analyses(rng)
    flip = {"A": "B", "B": "A"}
    total = 0
    for name in names:
        accuracy = rng.uniform(0.5, 0.85)
        first_bias = rng.uniform(0.0, 0.25)  # share of answers naming whatever was shown first
        tie_rate, invalid_rate = rng.choice((0.0, 0.01, 0.04)), rng.uniform(0.0, 0.03)
        fail_rate = rng.uniform(0.0, 0.02)
        judge = Judge.objects.create(
            name=name,
            project=project,
            backend=Judge.Backend.OPENAI,
            connection=connection,
            model=name.removeprefix("bench-"),
            sampling={"temperature": 0, "max_tokens": 1024, "seed": 1},
        )
        started = timezone.now() - timedelta(hours=rng.uniform(2, 200))
        run = JudgeRun.objects.create(
            judge=judge,
            project=project,
            samples=1,
            status=JudgeRun.Status.FINISHED,
            trials=2 * len(pairs),
            created_by=lead,
            started_at=started,
            finished_at=started + timedelta(minutes=rng.uniform(20, 90)),
        )
        verdicts, tallies = [], []
        for index, (pair_id, label) in enumerate(pairs):
            if index % 1000 == 0:
                tallies.append({"answered": 0, "ties": 0, "invalid": 0, "failed": 0})
            truth = label or rng.choice("AB")
            for order in ("forward", "reverse"):
                shown_first = "A" if order == "forward" else "B"
                roll = rng.random()
                choice, error = None, ""
                if roll < fail_rate:
                    error = "HTTP 503: upstream overloaded (gave up after 6 attempts)"
                    tallies[-1]["failed"] += 1
                elif roll < fail_rate + invalid_rate:
                    choice = "invalid"
                    tallies[-1]["invalid"] += 1
                elif roll < fail_rate + invalid_rate + tie_rate:
                    choice = "tie"
                    tallies[-1]["ties"] += 1
                else:
                    if rng.random() < first_bias:
                        choice = shown_first
                    else:
                        choice = truth if rng.random() < accuracy else flip[truth]
                    tallies[-1]["answered"] += 1
                shown = flip.get(choice, choice) if order == "reverse" else choice
                raw = (
                    json.dumps({"analysis": rng.choice(analyses), "better_response": shown})
                    if choice
                    else ""
                )
                verdicts.append(
                    Verdict(
                        judge=judge,
                        pair_id=pair_id,
                        run=run,
                        order=order,
                        sample=0,
                        choice=choice,
                        error=error,
                        raw_output=raw,
                        latency_ms=rng.randint(800, 20_000) if choice else None,
                        input_tokens=rng.randint(1500, 9000) if choice else None,
                        output_tokens=rng.randint(200, 700) if choice else None,
                        created_at=run.started_at,
                    )
                )
        Verdict.objects.bulk_create(verdicts, batch_size=2000)
        ids = [pair_id for pair_id, _label in pairs]
        JudgeRunChunk.objects.bulk_create(
            JudgeRunChunk(
                run=run,
                index=i,
                pair_ids=ids[i * 1000 : (i + 1) * 1000],
                done=True,
                attempts=1,
                finished_at=run.finished_at,
                **tally,
            )
            for i, tally in enumerate(tallies)
        )
        total += len(verdicts)
    return total


def seed_all(
    work: Path, rng: random.Random, tasks=TASKS, judges: int = JUDGES, scale: int = 1
) -> dict:
    from annotation.models import Rating
    from content.models import Pair
    from judging.models import Verdict
    from projects.models import Membership, Project, Task

    started = time.perf_counter()
    if scale > 1:  # MMRB2's files are one scale: ten times them is synthetic
        print(f"{scale} × MMRB2's size: synthetic pairs ...", flush=True)
        slug = seed_synthetic(work, tasks, scale)
        source = f"synthetic ×{scale}"
    elif MMRB2.is_dir():
        print(f"importing the MMRB2 files from {MMRB2} ...", flush=True)
        slug = seed_mmrb2(work, tasks)
        source = "mmrb2"
    else:
        print(f"{MMRB2} is absent: synthetic pairs ...", flush=True)
        slug = seed_synthetic(work, tasks)
        source = "synthetic"
    project = Project.objects.get(slug=slug)
    lead = make_users(project, ["lead"], Membership.Role.LEAD)[0]
    annotators = make_users(
        project, [f"annotator{i}" for i in range(1, ANNOTATORS + 1)], Membership.Role.ANNOTATOR
    )
    topped_up = 0
    unrated = list(Pair.objects.filter(project=project, rating_count=0).order_by("id"))
    if unrated:  # the MMRB2 reasoning pairs: graded per response, no pairwise scores
        print(f"  {len(unrated)} pairs without pairwise scores: 3 ratings each", flush=True)
        topped_up = add_ratings(project, unrated, annotators, 3, rng)
    other = add_flags_and_adjudications(project, lead, annotators, rng)
    print(f"{judges} judges × {Pair.objects.filter(project=project).count()} pairs × 2 ...")
    add_judges(project, [f"bench-judge-{i:02d}" for i in range(1, judges + 1)], lead, rng)
    analyze()
    return {
        "source": source,
        "project": slug,
        "tasks": Task.objects.filter(project=project).count(),
        "pairs": Pair.objects.filter(project=project).count(),
        "ratings": Rating.objects.filter(pair__project=project).count(),
        "imported_ratings": Rating.objects.filter(pair__project=project, imported=True).count(),
        "ratings_by_annotators": topped_up,
        "verdicts": Verdict.objects.filter(pair__project=project).count(),
        "judges": judges,
        "kept": Pair.objects.filter(project=project, status=Pair.Status.KEPT).count(),
        **other,
        "seed_s": round(time.perf_counter() - started, 1),
    }


def grow(project, rng: random.Random) -> dict:
    """3 more judges over every pair and 500 more ratings (2 new annotators among the raters);
    the new judges are numbered after the seeded ones."""
    from django.contrib.auth.models import User

    from content.models import Pair
    from judging.models import Judge
    from projects.models import Membership

    started = time.perf_counter()
    lead = User.objects.get(username="lead")
    seeded = Judge.objects.filter(project=project, name__startswith="bench-judge-").count()
    verdicts = add_judges(
        project,
        [f"bench-judge-{i:02d}" for i in range(seeded + 1, seeded + EXTRA_JUDGES + 1)],
        lead,
        rng,
    )
    newcomers = make_users(project, ["annotator-new1", "annotator-new2"], "annotator")
    raters = list(
        User.objects.filter(
            memberships__project=project, memberships__role=Membership.Role.ANNOTATOR
        ).order_by("id")
    )
    ids = sorted(Pair.objects.filter(project=project).values_list("id", flat=True))
    pairs = list(Pair.objects.filter(pk__in=rng.sample(ids, EXTRA_RATINGS)).order_by("id"))
    ratings = add_ratings(project, pairs, raters, 1, rng)
    analyze()
    return {
        "verdicts": verdicts,
        "ratings": ratings,
        "new_annotators": len(newcomers),
        "grow_s": round(time.perf_counter() - started, 1),
    }
