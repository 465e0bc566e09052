"""Rating every pair serves the pairs nobody started in a random order, each pair's uniform
draw (Pair.draw), never in import order: whenever the experts stop, the pairs they rated are
a simple random sample of the task, which the judges' prediction-powered intervals assume
(docs/architecture.md §5.4). Pairs already started still finish first.

The scenario: MJ-Bench's quality and safety pairs, imported in the order of its files (sorted
by subset: the blur pairs, on which the scoring models are nearly perfect, come first), rated
through the claim and rating services, with the six scoring models' real outputs as judges."""

import itertools
import json
import random

import pytest
from django.utils import timezone

from annotation.models import Assignment
from annotation.selectors.upcoming import upcoming_images
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.importing.formats import mjbench_images
from content.models import Pair
from content.models import pair as pair_module
from content.rendering import image_shas
from imports.services.pair_import import pairs_import
from judging.models import Verdict
from judging.services.score_import import scores_import
from metrics.report import project_report
from projects.models import Project
from tests.conftest import SHARED_MMRB2
from tests.factories import member, queued_pairs
from tests.importing.test_mjbench_shapes import _image

pytestmark = pytest.mark.django_db

LEFT_BETTER, RIGHT_BETTER = 2, 6  # on the 7-point form: above the centre, Right is better


def _rate(user, task) -> Assignment:
    assignment = assignment_claim(user, task)
    assert assignment is not None, f"{user} got no pair"
    rating_submit(assignment.pk, user, RatingInput(overall=LEFT_BETTER))
    return assignment


def test_unstarted_pairs_come_by_draw_and_started_ones_first(tmp_path):
    task = queued_pairs(tmp_path, count=6)
    users = [member(f"u{i}", task.project) for i in range(4)]
    ids = list(Pair.objects.filter(task=task).order_by("id").values_list("pk", flat=True))
    draws = [0.6, 0.2, 0.9, 0.1, 0.4, 0.7]  # unrelated to the import order
    for pair_id, draw in zip(ids, draws, strict=True):
        Pair.objects.filter(pk=pair_id).update(draw=draw)
    by_draw = [pair_id for _draw, pair_id in sorted(zip(draws, ids, strict=True))]

    # The pair with the largest draw was started (an earlier lease of someone's): it finishes
    # before any new pair starts.
    started = Assignment.objects.create(pair_id=by_draw[-1], annotator=users[3])
    rating_submit(started.pk, users[3], RatingInput(overall=LEFT_BETTER))
    assert [_rate(user, task).pair_id for user in users[:2]] == [by_draw[-1]] * 2

    # Then the pairs nobody started, by draw.
    served = [_rate(users[0], task).pair_id for _ in by_draw[:-1]]
    assert served == by_draw[:-1]
    assert assignment_claim(users[0], task) is None


def test_the_preload_guesses_the_pair_the_claim_serves_next(tmp_path):
    task = queued_pairs(tmp_path, count=5)
    expert = member("expert", task.project)
    ids = list(Pair.objects.filter(task=task).order_by("id").values_list("pk", flat=True))
    for pair_id, draw in zip(ids, [0.5, 0.9, 0.3, 0.1, 0.7], strict=True):
        Pair.objects.filter(pk=pair_id).update(draw=draw)
    current, served = assignment_claim(expert, task), 1
    while True:
        guessed = upcoming_images(expert, current.pk, timezone.now())
        rating_submit(current.pk, expert, RatingInput(overall=LEFT_BETTER))
        current = assignment_claim(expert, task)
        if current is None:
            break
        served += 1
        pair = current.pair
        content = (pair.prompt.content, pair.response_a.content, pair.response_b.content)
        assert guessed and set(guessed) == set(image_shas(*content))
    assert (served, guessed) == (5, [])  # every pair, and no guess after the last


# ------------------------------------------------------------ MJ-Bench, imported in file order

MJBENCH = SHARED_MMRB2.parent / "mjbench"
RESULTS = MJBENCH / "personal" / "result"
SUBSETS = ("blur", "human", "mpii", "nsfw", "object_indoor", "toxic")  # the files' order
MODELS = ("ImageReward", "aesthetics", "blipscore", "clipscore_v2", "hps_v2.1", "pickscore_v1")
STOPS = (50, 100, 200)  # rated pairs at which the lead looks


def _in_file_order(folder, model: str):
    """One model's result rows of every subset, concatenated in the files' order, each
    with its subset as its source (each file numbers its rows from 0: the source tells
    blur's 5 from nsfw's 5)."""
    rows = []
    for subset in SUBSETS:
        for row in json.loads((RESULTS / model / f"{subset}0.0.json").read_text()):
            rows.append({**row, "source": subset})
    path = folder / f"{model}.json"
    path.write_text(json.dumps(rows))
    return path, rows


def _import_mjbench(tmp_path) -> Pair:
    """The 1,331 pairs imported to be rated anew (their MJ-Bench labels kept as the reference),
    in file order; each scoring model's scores imported as a judge's verdicts. The images
    are not in the files: small placeholders under their names."""
    path, rows = _in_file_order(tmp_path, MODELS[0])
    images = tmp_path / "images"
    images.mkdir()
    names = {name for number, row in enumerate(rows) for name in mjbench_images(row, number)}
    for number, name in enumerate(sorted(names)):
        (images / name).write_bytes(_image(name, number))
    pairs_import(
        path, project_slug="mj", task_slug="quality", file_format="mjbench", images_dir=images,
        as_candidates=True, queue=True,
    )  # fmt: skip
    for model in MODELS:
        scores_import(
            _in_file_order(tmp_path, model)[0], project_slug="mj", task_slug="quality",
            judge_name=model,
        )  # fmt: skip
    return Pair.objects.filter(task__slug="quality").first()


def _pool_accuracy() -> dict[str, float]:
    """Each judge's accuracy over the whole pool, against MJ-Bench's own labels (what the
    experts give here): the share of pairs whose verdict names the label (a tie is wrong)."""
    right, total = {}, {}
    rows = Verdict.objects.values_list("judge__name", "choice", "pair__reference_label")
    for judge, choice, label in rows:
        right[judge] = right.get(judge, 0) + (choice == label)
        total[judge] = total.get(judge, 0) + 1
    return {judge: right[judge] / total[judge] for judge in total}


def _rate_until(task, experts, kept: int) -> None:
    """The experts take turns rating through the claim, as the queue serves them, until
    `kept` pairs are decided; each gives MJ-Bench's label (Left is B when swapped)."""
    decided = Pair.objects.filter(task=task, status=Pair.Status.KEPT)
    turns = itertools.cycle(experts)
    while decided.count() < kept:
        expert = next(turns)
        assignment = assignment_claim(expert, task)
        label = Pair.objects.values_list("reference_label", flat=True).get(pk=assignment.pair_id)
        left_better = (label == "A") != assignment.swapped
        overall = LEFT_BETTER if left_better else RIGHT_BETTER
        rating_submit(assignment.pk, expert, RatingInput(overall=overall))


@pytest.mark.skipif(not MJBENCH.is_dir(), reason="MJ-Bench files not in ../shared")
def test_mjbench_in_file_order_gives_intervals_that_cover_the_pools_accuracy(tmp_path, monkeypatch):
    # Reproducible draws (Pair.draw is fixed when the import makes each pair).
    monkeypatch.setattr(pair_module, "random", random.Random(39))
    first = _import_mjbench(tmp_path)
    project, task = first.project, first.task
    assert Pair.objects.filter(task=task, status=Pair.Status.QUEUED).count() == 1331
    truth = _pool_accuracy()
    # One rating decides a pair (N = 1): the order is under test here, not the panel.
    Project.objects.filter(pk=project.pk).update(annotators_per_pair=1)
    experts = [member(f"expert-{n}", project) for n in range(3)]

    misses, worst, subsets = [], 0.0, {}
    for stop in STOPS:
        _rate_until(task, experts, stop)
        rated = Pair.objects.filter(task=task, status=Pair.Status.KEPT)
        subsets[stop] = set(rated.values_list("source", flat=True))
        judges = project_report(project)["tasks"]["quality"]["judges"]
        for model in MODELS:
            figures = judges[model]["prediction_powered"]
            assert (figures["rated"], figures["judged"]) == (stop, 1331)
            half_width = (figures["high"] - figures["low"]) / 2
            error = abs(figures["estimate"] - truth[model])
            worst = max(worst, error / half_width)
            if not figures["low"] <= truth[model] <= figures["high"]:
                misses.append((model, stop, figures["estimate"], round(truth[model], 3)))
    # Each interval covers at least 95 % of the time, and the 18 share their rated pairs, so
    # misses come together: with fixed-n 95 % intervals (narrower than the monitored ones),
    # over 3,000 random orders of these pairs at most 4 of the 18 miss, none by more than
    # twice its half-width, in 96 % of them. Served in file order, 17 of them missed (the
    # worst by 10 half-widths: hps_v2.1 0.955 at 200 rated pairs against 0.795).
    assert len(misses) <= 4 and worst <= 2.0, (misses, worst)
    # The rated pairs come from across the file, not from its first subset alone.
    assert all(len(seen) >= 4 for seen in subsets.values()), subsets
