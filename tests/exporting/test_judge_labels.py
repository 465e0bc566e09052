"""Judge labels with a guarantee in the export (issue 27; exports/judge_labels.py): the pairs no
expert decided get the judges' label where they are confident enough, the rows say whose label
it is, the manifest records the calibration, MMRB2's files keep the experts' labels only, and
the labels given agree with the truth held out from the calibration."""

import json

import numpy as np
import pytest

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
    confidence says something of their correctness. Half the pairs are kept with the experts'
    label (the truth); the other half are queued, their truth held out."""
    rng = np.random.default_rng(11)
    project = Project.objects.create(
        slug="jl", name="JL", judge_labels=True, judge_labels_alpha=ALPHA, judge_labels_delta=DELTA
    )
    task = Task.objects.create(project=project, slug="t2i", name="T", kind="t2i", aspects=[])
    generator = Generator.objects.create(name="g")
    prompt = Prompt.objects.create(project=project, fingerprint="f", content=[["text", "x"]])
    truth = {}
    for i in range(PAIRS):
        side = "A" if rng.random() < 0.5 else "B"
        kept = i < KEPT
        pair = Pair.objects.create(
            project=project, task=task, external_id=f"p{i}", prompt=prompt,
            response_a=Response.objects.create(generator=generator, content=[["text", "a"]]),
            response_b=Response.objects.create(generator=generator, content=[["text", "b"]]),
            status=Pair.Status.KEPT if kept else Pair.Status.QUEUED,
            label=side if kept else "", decided_by="consensus" if kept else "",
        )  # fmt: skip
        truth[pair.external_id] = side
        right_chance = rng.uniform(0.55, 0.99)
        for j in range(5):
            judge, _ = Judge.objects.get_or_create(name=f"j{j}", backend="random")
            other = "B" if side == "A" else "A"
            choice = side if rng.random() < right_chance else other
            Verdict.objects.create(judge=judge, pair=pair, order="forward", sample=0, choice=choice)
    return project, truth


def _rows(folder, task="t2i"):
    return [json.loads(line) for line in (folder / f"{task}.jsonl").read_text().splitlines()]


def test_undecided_pairs_get_the_judges_label_where_the_guarantee_allows(world, tmp_path):
    project, truth = world
    export_dataset(project, tmp_path / "out")
    rows = _rows(tmp_path / "out")
    experts = [row for row in rows if row["label_source"] == "experts"]
    judged = [row for row in rows if row["label_source"].startswith("judges")]
    assert len(experts) == KEPT and all(row["status"] == "kept" for row in experts)
    assert judged and all(row["status"] == "queued" for row in judged)
    assert judged[0]["label_source"] == "judges, agreement ≥ 90 % at 90 % confidence"
    assert len(judged) < PAIRS - KEPT  # the unsure ones stay for the experts
    agreement = np.mean([row["chosen"] == truth[row["id"]] for row in judged])
    assert agreement >= 1 - ALPHA  # on the held-out truth

    manifest = json.loads((tmp_path / "out" / "manifest.json").read_text())
    calibration = manifest["judge_labels"]["t2i"]
    assert (calibration["alpha"], calibration["delta"]) == (ALPHA, DELTA)
    assert calibration["calibration_pairs"] == KEPT
    assert calibration["labelled"] == len(judged)
    assert 0 < calibration["coverage"] < 1 and calibration["threshold"] is not None
    assert calibration["agreement_lower_bound"] >= 1 - ALPHA
    assert manifest["project"]["judge_labels"] is True


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


def test_the_stated_agreement_holds_on_held_out_pairs_over_many_calibration_draws(world):
    """The guarantee through the product: for each seed, a different half of the pairs is
    rated (kept with the experts' label, the calibration set), the other half queued with its
    truth held out; the labels `judge_labels` gives must agree with that truth at least
    1 - alpha of the time in at least 1 - delta of the draws."""
    project, truth = world
    task = project.tasks.get()
    by_pk = {pk: truth[external] for pk, external in Pair.objects.values_list("pk", "external_id")}
    pks = np.array(sorted(by_pk))
    seeds, violations, labelled = 60, 0, []
    for seed in range(seeds):
        rated = set(np.random.default_rng([seed, 27]).choice(pks, KEPT, replace=False).tolist())
        held = [pk for pk in pks.tolist() if pk not in rated]
        Pair.objects.filter(pk__in=held).update(status=Pair.Status.QUEUED, label="")
        for side in ("A", "B"):
            Pair.objects.filter(pk__in=[pk for pk in rated if by_pk[pk] == side]).update(
                status=Pair.Status.KEPT, label=side
            )
        given = judge_labels(project, task).labels
        assert set(given) <= set(held)  # only the pairs no expert decided
        labelled.append(len(given))
        if given:
            agreement = np.mean([side == by_pk[pk] for pk, side in given.items()])
            violations += agreement < 1 - ALPHA
    # At most delta of the draws, with room for the draws' own noise: 10 of 60 has a chance
    # below 2 % when the violation rate is delta itself.
    assert violations <= 9
    # Not by labelling nothing: most draws label a good share of the held-out half.
    assert np.median(labelled) > 0.3 * (PAIRS - KEPT)
