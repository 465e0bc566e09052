"""Judge labels with a guarantee in the export (exports/judge_labels.py): the undecided pairs of
the experts' pool get the judges' label where they are sure enough, calibrated on the pairs
decided at the front of the draw order (dropped ones counting against the judges) at checkpoints
only; the rows say what is proven of them, the manifest records the calibration; candidate pairs
and imported labels are left alone; a lone vote among ties is no certainty; MMRB2's files keep
the experts' labels only; and the statements hold on the truth held out from the calibration."""

import json

import numpy as np
import pytest
from django.db import connection

from content.models import Generator, Pair, Prompt, Response
from exports.judge_labels import judge_labels
from exports.writer import export_dataset
from judging.models import Judge, Verdict
from projects.models import Project, Task

pytestmark = pytest.mark.django_db

PAIRS, KEPT = 700, 350
ALPHA, DELTA = 0.1, 0.1


@pytest.fixture
def world():
    """Five judges vote on every pair; how many agree depends on a hidden difficulty, so their
    confidence says something of their correctness. The pairs with the smallest draws, half of
    them, are kept with the experts' label (the truth), as when the experts are served in draw
    order; the other half are queued, their truth held out."""
    rng = np.random.default_rng(11)
    project = Project.objects.create(
        slug="jl", name="JL", judge_labels=True, judge_labels_alpha=ALPHA, judge_labels_delta=DELTA
    )
    task = Task.objects.create(project=project, slug="t2i", name="T", kind="t2i", aspects=[])
    generator = Generator.objects.create(name="g")
    prompt = Prompt.objects.create(project=project, fingerprint="f", content=[["text", "x"]])
    judges = [Judge.objects.get_or_create(name=f"j{j}", backend="random")[0] for j in range(5)]
    truth, pairs, choices = {}, [], []
    # The draws in the order they always were; the rows written in three bulk inserts after.
    for i in range(PAIRS):
        side = "A" if rng.random() < 0.5 else "B"
        kept = i < KEPT
        pairs.append(Pair(
            project=project, task=task, external_id=f"p{i}", prompt=prompt,
            response_a=Response(generator=generator, content=[["text", "a"]]),
            response_b=Response(generator=generator, content=[["text", "b"]]),
            status=Pair.Status.KEPT if kept else Pair.Status.QUEUED,
            label=side if kept else "", decided_by="consensus" if kept else "",
            draw=(i + 1) / (PAIRS + 1),
        ))  # fmt: skip
        truth[f"p{i}"] = side
        right_chance = rng.uniform(0.55, 0.99)
        other = "B" if side == "A" else "A"
        choices.append([side if rng.random() < right_chance else other for _ in judges])
    Response.objects.bulk_create([r for pair in pairs for r in (pair.response_a, pair.response_b)])
    Pair.objects.bulk_create(pairs)
    Verdict.objects.bulk_create(
        Verdict(judge=judge, pair=pair, order="forward", sample=0, choice=choice)
        for pair, row in zip(pairs, choices, strict=True)
        for judge, choice in zip(judges, row, strict=True)
    )
    return project, truth


def _rows(folder, task="t2i"):
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text().splitlines()]


def _labels(project):
    return judge_labels(project, project.tasks.get())


def _by_draw(**filters):
    return Pair.objects.filter(**filters).order_by("draw", "id")


def test_undecided_pairs_get_the_judges_label_where_the_guarantee_allows(world, tmp_path):
    project, truth = world
    export_dataset(project, tmp_path / "out")
    rows = _rows(tmp_path / "out")
    experts = [row for row in rows if row["label_source"] == "experts"]
    judged = [row for row in rows if row["label_source"].startswith("judges")]
    assert len(experts) == KEPT and all(row["status"] == "kept" for row in experts)
    assert judged and all(row["status"] == "queued" for row in judged)
    assert len(judged) < PAIRS - KEPT  # the unsure ones stay for the experts

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    calibration = manifest["judge_labels"]["t2i"]
    assert (calibration["alpha"], calibration["delta"]) == (ALPHA, DELTA)
    # 350 pairs decided at the front of the draw order: the checkpoint of the first 200, which
    # spends delta / 4 (delta / 2 at 100, delta / 4 at 200, ...).
    assert calibration["decided_in_draw_order"] == KEPT
    assert (calibration["calibration_pairs"], calibration["next_checkpoint"]) == (200, 400)
    assert calibration["delta_spent"] == pytest.approx(DELTA / 4)
    assert calibration["pool_pairs"] == PAIRS and calibration["threshold"] is not None
    assert 0 < calibration["coverage"] < 1
    assert calibration["disagreements_at_most"] == int(ALPHA * calibration["covered"])
    assert calibration["labelled"] == len(judged)
    # Each row states what is proven of the labels of this export, rounded down.
    least = calibration["labelled_agreement_at_least"]
    assert 0.5 < least < 1
    stated = f"judges, agreement ≥ {int(1000 * least) / 10:g} % at 90 % confidence"
    assert {row["label_source"] for row in judged} == {stated} == {calibration["source"]}
    assert f"at most {calibration['disagreements_at_most']} of the" in calibration["guarantee"]
    assert manifest["project"]["judge_labels"] is True
    # On the truth held out.
    assert np.mean([row["chosen"] == truth[row["id"]] for row in judged]) >= least


def test_an_imported_label_is_never_replaced_by_the_judges(world, tmp_path):
    project, _truth = world
    export_dataset(project, tmp_path / "before")
    labelled = next(r for r in _rows(tmp_path / "before") if r["label_source"].startswith("judges"))
    # The same pair, imported with the experts' label to be annotated anew: the experts' to
    # decide, not the judges' to label (and, undecided, not exported).
    mine = "B" if labelled["chosen"] == "A" else "A"
    Pair.objects.filter(external_id=labelled["id"]).update(label=mine, decided_by="imported")
    export_dataset(project, tmp_path / "after")
    rows = _rows(tmp_path / "after")
    assert labelled["id"] not in {row["id"] for row in rows}
    assert any(row["label_source"].startswith("judges") for row in rows)


def test_candidate_pairs_get_no_judge_label(world):
    """Candidates are not in the experts' pool: the calibration pairs say nothing of them."""
    project, _truth = world
    labelled = _labels(project).labels
    candidates = list(labelled)[:20]
    Pair.objects.filter(pk__in=candidates).update(status=Pair.Status.CANDIDATE)
    after = _labels(project)
    assert after.labels and not set(candidates) & set(after.labels)
    assert after.calibration.pool_pairs == PAIRS - len(candidates)


def test_a_lone_vote_among_ties_is_not_a_sure_label(world):
    """A pair with one judge trial naming A among 23 ties was labelled as surely as five
    judges agreeing (its A/B share is 1.0): it is not labelled now, while those are."""
    project, _truth = world
    labelled = _labels(project).labels
    lone, sure = list(labelled)[:2]
    Verdict.objects.filter(pair_id=lone).delete()
    judge = Judge.objects.get(name="j0")
    Verdict.objects.bulk_create(
        Verdict(judge=judge, pair_id=lone, order="forward", sample=sample,
                choice="A" if sample == 0 else "tie")
        for sample in range(24)
    )  # fmt: skip
    after = _labels(project).labels
    assert lone not in after and sure in after


def test_dropped_pairs_count_against_the_judges(world):
    """A pair the experts drop gets none of the judges' labels right: the calibration counts
    it, so when a third of the decided pairs are dropped no label is certain enough."""
    project, _truth = world
    assert _labels(project).labels
    decided = list(_by_draw(status=Pair.Status.KEPT).values_list("pk", flat=True))
    Pair.objects.filter(pk__in=decided[::3]).update(status=Pair.Status.DROPPED, label="")
    after = _labels(project)
    assert after.labels == {} and after.calibration.threshold is None
    assert after.calibration.decided_in_draw_order == KEPT  # still decided, at the front


def test_re_exporting_between_checkpoints_moves_nothing_but_the_labels_still_open(world):
    """A lead exporting after every rating: the threshold stays that of the checkpoint; the
    pairs decided since leave the labels; the next checkpoint comes at 400 pairs decided at the
    front of the draw order. A pair early in the order still undecided holds the checkpoint."""
    project, truth = world
    first = _labels(project)
    for count in (1, 48):
        pks = list(_by_draw(status=Pair.Status.QUEUED).values_list("pk", flat=True)[:count])
        for pk in pks:
            external = Pair.objects.get(pk=pk).external_id
            Pair.objects.filter(pk=pk).update(status=Pair.Status.KEPT, label=truth[external])
        later = _labels(project)
        assert _figures(later) == _figures(first)
        assert not set(pks) & set(later.labels) and set(later.labels) < set(first.labels)
    assert later.calibration.decided_in_draw_order == 399
    # One more: 400 decided at the front, the next checkpoint (the first 400 by draw).
    next_up = _by_draw(status=Pair.Status.QUEUED).first()
    Pair.objects.filter(pk=next_up.pk).update(status=Pair.Status.DROPPED)
    assert _labels(project).calibration.calibration_pairs == 400
    # A pair among the first 100 by draw back in the queue: no checkpoint yet, no label.
    early = _by_draw(status=Pair.Status.KEPT).values_list("pk", flat=True)[60]
    Pair.objects.filter(pk=early).update(status=Pair.Status.QUEUED, label="")
    held = _labels(project)
    assert held.calibration.decided_in_draw_order == 60
    assert (held.calibration.calibration_pairs, held.calibration.next_checkpoint) == (0, 100)
    assert held.labels == {} and held.source() == ""


def test_benchmark_files_and_projects_without_the_setting_keep_the_experts_labels(world, tmp_path):
    project, _truth = world
    export_dataset(project, tmp_path / "mmrb2", file_format="mmrb2")
    pairs = json.loads((tmp_path / "mmrb2" / "t2i.json").read_text())["pairs"]
    assert len(pairs) == KEPT
    Project.objects.filter(pk=project.pk).update(judge_labels=False)
    project.refresh_from_db()
    export_dataset(project, tmp_path / "off")
    assert {row["label_source"] for row in _rows(tmp_path / "off")} == {"experts"}
    manifest = json.loads((tmp_path / "off" / "manifest.json").read_text())
    assert manifest["judge_labels"] == {}


def test_the_statements_hold_on_held_out_pairs_over_many_rating_orders(world):
    """The guarantee through the product: for each seed, new draws, the first half of the
    pairs by draw decided (kept with the truth, or dropped when the judges split 3-2, a third
    of those), the other half queued with its truth held out. The pool's bound (at most
    `disagreements_at_most` of the covered pairs disagree) and the labels' bound must both
    hold in at least 1 - delta of the orders."""
    project, truth = world
    task = project.tasks.get()
    pairs = list(Pair.objects.filter(task=task))
    by_pk = {pair.pk: truth[pair.external_id] for pair in pairs}
    a_votes = _a_votes(task)
    split = {pk for pk, a in a_votes.items() if a in (2, 3)}  # the judges split 3-2
    seeds, violations, labelled = 40, 0, []
    for seed in range(seeds):
        rng = np.random.default_rng([seed, 39])
        for pair, draw in zip(pairs, rng.random(len(pairs)), strict=True):
            pair.draw = draw
            decided = draw < 0.5
            dropped = decided and pair.pk in split and rng.random() < 1 / 3
            pair.status = (
                Pair.Status.QUEUED if not decided
                else Pair.Status.DROPPED if dropped else Pair.Status.KEPT
            )  # fmt: skip
            pair.label = by_pk[pair.pk] if pair.status == Pair.Status.KEPT else ""
        _save_orders(pairs)
        result = judge_labels(project, task)
        given, calibration = result.labels, result.calibration
        assert not Pair.objects.filter(pk__in=given).exclude(status=Pair.Status.QUEUED).exists()
        labelled.append(len(given))
        if calibration.threshold is None:
            continue
        # The pool's truth: dropped pairs disagree, undecided ones as the experts would decide.
        dropped = {pair.pk for pair in pairs if pair.status == Pair.Status.DROPPED}
        covered = _covered(a_votes, calibration.threshold)
        wrong = sum(pk in dropped or side != by_pk[pk] for pk, side in covered.items())
        agreement = np.mean([side == by_pk[pk] for pk, side in given.items()]) if given else 1
        violations += wrong > calibration.disagreements_at_most or (
            bool(given) and agreement < result.agreement_at_least
        )
    # At most delta of the orders, with room for the orders' own noise: 8 of 40 has a chance
    # below 5 % when the violation rate is delta itself.
    assert violations <= 7
    # Not by labelling nothing: most orders label a good share of the undecided half.
    assert np.median(labelled) > 0.2 * (PAIRS - KEPT)


def _figures(result):
    """The calibration's figures but how many pairs lead the draw order decided."""
    figures = result.calibration.as_dict()
    figures.pop("decided_in_draw_order", None)
    return figures


def _save_orders(pairs):
    """Pair.objects.bulk_update in one statement per row, the way the database likes it best
    (bulk_update's CASE takes seconds for 700 rows)."""
    table = Pair._meta.db_table
    with connection.cursor() as cursor:
        cursor.executemany(
            f"UPDATE {table} SET draw = %s, status = %s, label = %s WHERE id = %s",
            [(pair.draw, pair.status, pair.label, pair.pk) for pair in pairs],
        )


def _a_votes(task):
    votes = {}
    for pk, choice in Verdict.objects.filter(pair__task=task).values_list("pair_id", "choice"):
        votes[pk] = votes.get(pk, 0) + (choice == "A")
    return votes


def _covered(a_votes, threshold):
    """The judges' side on every pool pair whose 5-vote confidence reaches the threshold."""
    covered = {}
    for pk, a in a_votes.items():
        side, sure = ("A", (a + 1) / 7) if a > 2 else ("B", (5 - a + 1) / 7)
        if sure >= threshold:
            covered[pk] = side
    return covered
