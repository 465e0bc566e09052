"""Quality control end to end, with simulated annotators working through the real
services: two honest experts at different noise levels, a random clicker, one who always
presses the same key, and a fast one. `report --json` must rank the bad ones lowest on gold
accuracy and competence, and flag each with the right evidence."""

import io
import json
import random

import pytest
from django.core.management import call_command

from annotation.gold import schedule as gold_schedule
from annotation.gold import services as gold_service
from annotation.gold.services import GoldEntry, gold_set
from annotation.services import assignments as assignments_service
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from projects.models import Task
from projects.scale import to_canonical
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db

K = 7


def honest(noise):
    def rate(rng, truth_is_a, swapped):
        picks_a = truth_is_a if rng.random() >= noise else not truth_is_a
        canonical = rng.choice([5, 6, 7]) if picks_a else rng.choice([1, 2, 3])
        return to_canonical(canonical, K, swapped), rng.uniform(10, 40)

    return rate


def random_clicker(rng, truth_is_a, swapped):
    return rng.randint(1, K), rng.uniform(5, 20)


def same_key(rng, truth_is_a, swapped):
    return 2, rng.uniform(5, 20)  # "Left is better", whatever is on the left


def fast(rng, truth_is_a, swapped):
    shown, _seconds = honest(0.1)(rng, truth_is_a, swapped)
    return shown, rng.uniform(0.2, 1.0)


ANNOTATORS = {
    "careful": honest(0.05),
    "decent": honest(0.15),
    "clicker": random_clicker,
    "samekey": same_key,
    "hasty": fast,
}


def _same_run_every_time(monkeypatch, users, pairs):
    """The serving order (each pair's draw), the sides shown, the gold checks drawn and where
    they fall are random in the product; here they come from seeded generators of the test's
    own and from the annotator's rank rather than from database ids (those depend on the tests
    that ran before on PostgreSQL, and an unlucky draw makes an honest expert look biased:
    p < 0.01 is not p = 0)."""
    draws = random.Random(2028)
    for pair in pairs:
        pair.draw = draws.uniform(0.001, 1.0)
    Pair.objects.bulk_update(pairs, ["draw"])
    monkeypatch.setattr(assignments_service, "random", random.Random(2026))
    monkeypatch.setattr(gold_service, "random", random.Random(2027))
    rank = {user.pk: position for position, user in enumerate(users.values())}
    monkeypatch.setattr(
        gold_schedule,
        "gold_window_offset",
        lambda user_id, _task_id, window, width: 1 + (rank[user_id] + 3 * window) % width,
    )


@pytest.fixture
def report(tmp_path, monkeypatch):
    task = queued_pairs(tmp_path, count=130, annotators_per_pair=len(ANNOTATORS))
    Task.objects.filter(pk=task.pk).update(gold_rate=0.3)
    task.refresh_from_db()
    rng = random.Random(2026)
    pairs = list(Pair.objects.filter(task=task).order_by("id"))
    truth = {pair.pk: rng.random() < 0.5 for pair in pairs}
    gold_set(task, [GoldEntry(p.external_id, "A" if truth[p.pk] else "B") for p in pairs[:30]])
    users = {name: member(name, task.project) for name in ANNOTATORS}
    _same_run_every_time(monkeypatch, users, pairs)
    active = set(users)
    while active:  # everyone works at the same time, one pair each in turn
        for name in sorted(active):
            assignment = assignment_claim(users[name], task)
            if assignment is None:
                active.discard(name)
                continue
            shown, seconds = ANNOTATORS[name](rng, truth[assignment.pair_id], assignment.swapped)
            rating_submit(
                assignment.pk, users[name], RatingInput(overall=shown, active_seconds=seconds)
            )
    out = io.StringIO()
    call_command("report", "--project", task.project.slug, "--json", stdout=out)
    return json.loads(out.getvalue())["tasks"]["t2i"]


def test_gold_flags_and_competence_rank_the_bad_annotators_lowest(report):
    """One project of 100 pairs and 30 gold checks (enough answers to tell an expert wrong
    15 % of the time from a coin), rated once (the slow part), read three ways."""
    people = report["annotators"]
    honest_ones, bad_ones = ("careful", "decent"), ("clicker", "samekey")

    gold = {name: people[name]["gold"] for name in ANNOTATORS}
    assert all(g["n"] == 30 for g in gold.values()), gold  # 100 real pairs at a rate of 0.3
    assert min(gold[n]["accuracy"] for n in honest_ones) > max(
        gold[n]["accuracy"] for n in bad_ones
    ), gold
    low, high = gold["careful"]["interval"]
    assert low <= gold["careful"]["accuracy"] <= high

    for model in ("mace", "dawid_skene"):
        scores = {name: people[name]["competence"][model] for name in ANNOTATORS}
        worst_honest = min(scores[n] for n in (*honest_ones, "hasty"))
        assert max(scores[n] for n in bad_ones) < worst_honest, (model, scores)
    consensus = report["competence_consensus"]["dawid_skene"]
    assert consensus["kept_compared"] > 0
    assert 0 <= consensus["kept_changed"] <= consensus["kept_compared"]

    assert people["careful"]["flags"] == [] and people["decent"]["flags"] == []
    assert people["hasty"]["flags"] == ["fast"]
    assert "ratings under 3 s of active time" in people["hasty"]["flag_evidence"]["fast"]
    assert {"same_score", "same_side", "left_bias"} <= set(people["samekey"]["flags"])
    assert people["samekey"]["ratings"] == 100
