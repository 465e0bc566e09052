"""metrics.competence: Dawid–Skene and MACE against crowd-kit on the same data, the edge cases,
and simulated annotators whose true sides are known."""

import math

import numpy as np
import pytest

from metrics.competence import LABELS, CompetenceResult, dawid_skene, digamma, mace
from tests.references import reference

# crowd-kit 1.4.2 calls pandas APIs that pandas 3 deprecates (inplace=, copy=): its noise.
pytestmark = pytest.mark.filterwarnings("ignore::DeprecationWarning:crowdkit")

# Share of votes on which each simulated annotator clicks a uniformly random side.
NOISE = {"careful": 0.1, "fair": 0.25, "sloppy": 0.4, "random": 1.0}
JUNK = {"random", "always_a"}
TOLERANCE = 1e-6  # crowd-kit's figures, reproduced to this
# The fixed-point comparisons use a data set on which EM settles (to 1e-8) within about 150
# steps from crowd-kit's start: crowd-kit's pandas loop takes some 30 ms a step.
REFERENCE_SEED = 6


def simulate(seed, *, items=200, raters_per_item=None):
    """(rows, truth): honest annotators at three noise levels, a random clicker and an
    annotator who always answers A; each item rated by all or by `raters_per_item` of them."""
    rng = np.random.default_rng(seed)
    names = [*NOISE, "always_a"]
    rows, truth = [], {}
    for index in range(items):
        item = f"item{index:03d}"
        truth[item] = LABELS[rng.choice(3, p=[0.45, 0.4, 0.15])]
        raters = names if raters_per_item is None else rng.choice(names, raters_per_item, False)
        for annotator in raters:
            if annotator == "always_a":
                label = "A"
            elif rng.random() < NOISE[annotator]:
                label = LABELS[rng.integers(3)]
            else:
                label = truth[item]
            rows.append((str(annotator), item, label))
    return rows, truth


def sparse_rows():
    """Items rated by 3 of the 5 annotators, plus one who rates a single item."""
    rows, _ = simulate(2, items=120, raters_per_item=3)
    return [*rows, ("once", "item007", "B")]


def majority_vote(rows):
    counts: dict = {}
    for _, item, label in rows:
        counts.setdefault(item, dict.fromkeys(LABELS, 0))[label] += 1
    return {item: max(LABELS, key=by_label.__getitem__) for item, by_label in counts.items()}


def accuracy(labels, truth):
    return sum(labels[item] == side for item, side in truth.items()) / len(truth)


# --- crowd-kit, the reference ----------------------------------------------------------------


@pytest.fixture(scope="module")
def crowdkit():
    return reference("crowdkit.aggregation")


def crowdkit_frame(rows):
    """(data, label_of_code). crowd-kit's MACE pairs the codes of annotators and labels in
    first-seen order with counts in sorted order, so the rows go in sorted by annotator and
    the labels are coded by first appearance: both orders then agree (checked)."""
    import pandas as pd

    rows = sorted(rows, key=lambda row: (row[0], row[1]))
    label_of_code = list(dict.fromkeys(label for *_, label in rows))
    data = pd.DataFrame(
        [(annotator, item, label_of_code.index(label)) for annotator, item, label in rows],
        columns=["worker", "task", "label"],
    )
    for column in ("worker", "label"):
        first_seen = list(pd.factorize(data[column])[1])
        assert first_seen == sorted(first_seen)
    return data, label_of_code


def posterior_gap(result: CompetenceResult, probas, label_of_code):
    """Largest difference of posteriors; labels crowd-kit never saw must be 0 here."""
    unseen = [label for label in LABELS if label not in label_of_code]
    gap = max((result.posteriors[i][label] for i in probas.index for label in unseen), default=0.0)
    for code, label in enumerate(label_of_code):
        for item, theirs in probas[code].items():
            gap = max(gap, abs(result.posteriors[item][label] - theirs))
    assert set(result.posteriors) == set(probas.index)
    return gap


def ds_reference(crowdkit, rows, iterations):
    """crowd-kit's Dawid–Skene, all `iterations` run (tol=-inf: its own stopping rule can stop
    early), with competence = sum_k prior_k * confusion[k][k] from its priors and errors."""
    data, label_of_code = crowdkit_frame(rows)
    model = crowdkit.DawidSkene(n_iter=iterations, tol=-math.inf).fit(data)
    competence = {}
    for annotator in data.worker.unique():
        competence[annotator] = sum(
            model.priors_[code] * model.errors_.loc[(annotator, code), code]
            for code in model.priors_.index
            if (annotator, code) in model.errors_.index
        )
    return model.probas_, competence, label_of_code


def mace_reference(crowdkit, rows, iterations, method, model_class=None):
    data, label_of_code = crowdkit_frame(rows)
    model_class = model_class or crowdkit.MACE
    model = model_class(n_restarts=1, n_iter=iterations, method=method).fit(data)
    annotators = data.worker.unique()  # first-seen order = the model's rows
    competence = dict(zip(annotators, model.spamming_[:, 1], strict=True))
    return model.probas_, competence, label_of_code


def competence_gap(result: CompetenceResult, competence):
    assert set(result.competence) == set(competence)
    return max(abs(result.competence[a] - competence[a]) for a in competence)


def test_dawid_skene_reproduces_crowdkit_at_the_fixed_point(crowdkit):
    rows, _ = simulate(REFERENCE_SEED)
    ours = dawid_skene(rows, tol=1e-12)
    assert ours.converged
    probas, competence, label_of_code = ds_reference(crowdkit, rows, iterations=100)
    assert posterior_gap(ours, probas, label_of_code) < TOLERANCE
    assert competence_gap(ours, competence) < TOLERANCE


@pytest.mark.parametrize("model", [dawid_skene, mace])
def test_the_default_tolerance_answers_within_1e6_of_the_fixed_point(model):
    """What the report shows (default tol) is the fixed point to 1e-6, not only its last step."""
    rows, _ = simulate(REFERENCE_SEED)
    shown, fixed = model(rows), model(rows, tol=1e-13, max_iter=20_000)
    assert shown.converged and fixed.converged
    gap = max(
        abs(shown.posteriors[item][label] - fixed.posteriors[item][label])
        for item in fixed.posteriors
        for label in fixed.posteriors[item]
    )
    assert gap < 1e-6
    assert competence_gap(shown, fixed.competence) < 1e-6


@pytest.mark.parametrize("data", [sparse_rows, lambda: [r for r in sparse_rows() if r[2] != "tie"]])
def test_dawid_skene_follows_crowdkit_step_by_step(crowdkit, data):
    """Same start (soft majority vote), same number of EM steps: same posteriors. The second
    data set never uses "tie": both models run over A and B only."""
    rows = data()
    ours = dawid_skene(rows, tol=0, max_iter=15)
    assert ours.iterations == 15 and not ours.converged
    probas, competence, label_of_code = ds_reference(crowdkit, rows, iterations=15)
    assert posterior_gap(ours, probas, label_of_code) < 1e-9
    assert competence_gap(ours, competence) < 1e-9


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_reproduces_crowdkit_at_the_fixed_point(crowdkit, method):
    """crowd-kit starts from its own random draw (seed 0), one restart, 160 steps: the fixed
    point does not depend on where EM starts on this data."""
    rows, _ = simulate(REFERENCE_SEED)
    ours = mace(rows, tol=1e-12, variational=method == "vb")
    assert ours.converged
    probas, competence, label_of_code = mace_reference(crowdkit, rows, 160, method)
    assert posterior_gap(ours, probas, label_of_code) < TOLERANCE
    assert competence_gap(ours, competence) < TOLERANCE


@pytest.mark.parametrize("method", ["vb", "em"])
def test_mace_follows_crowdkit_step_by_step(crowdkit, method):
    class EqualTrust(crowdkit.MACE):
        def _initialize(self, n_workers, n_labels):
            super()._initialize(n_workers, n_labels)  # the priors
            self.spamming_ = np.full((n_workers, 2), 0.5)
            self.thetas_ = np.full((n_workers, n_labels), 1 / n_labels)

    rows = sparse_rows()
    ours = mace(rows, tol=0, max_iter=15, variational=method == "vb")
    probas, competence, label_of_code = mace_reference(crowdkit, rows, 15, method, EqualTrust)
    assert posterior_gap(ours, probas, label_of_code) < 1e-9
    assert competence_gap(ours, competence) < 1e-9


def test_digamma_matches_scipy():
    special = pytest.importorskip("scipy.special")
    x = np.concatenate([np.geomspace(1e-3, 1e6, 2000), [0.5, 1.0, 9.999999, 10.0, 10.5]])
    assert np.allclose(digamma(x), special.digamma(x), rtol=1e-13, atol=1e-13)


# --- edge cases ------------------------------------------------------------------------------

MODELS = [dawid_skene, mace]


@pytest.mark.parametrize("model", MODELS)
def test_empty_input_gives_an_empty_result(model):
    assert model([]) == CompetenceResult({}, {}, {}, 0, True)


@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("label", ["a", "left", None, 1])
def test_unknown_label_raises(model, label):
    with pytest.raises(ValueError, match="unknown label"):
        model([("ann1", "item1", "A"), ("ann2", "item1", label)])


@pytest.mark.parametrize("model", MODELS)
def test_a_side_nobody_chose_gets_no_posterior(model):
    rows = [r for r in simulate(3, items=60)[0] if r[2] != "tie"]
    result = model(rows)
    assert all(posterior["tie"] == 0.0 for posterior in result.posteriors.values())
    assert set(result.labels.values()) <= {"A", "B"}
    assert result.converged


@pytest.mark.parametrize("model", MODELS)
def test_one_annotator_is_believed(model):
    rows = [("solo", i, label) for i, label in enumerate(["A", "B", "tie", "A", "B", "A"])]
    result = model(rows)
    assert result.labels == {i: label for _, i, label in rows}
    assert 0.5 < result.competence["solo"] <= 1.0
    assert result.converged


@pytest.mark.parametrize("model", MODELS)
def test_results_are_distributions_and_every_annotator_is_scored(model):
    rows = sparse_rows()
    result = model(rows)
    assert result.converged and result.iterations > 1
    assert set(result.competence) == {annotator for annotator, *_ in rows}
    assert all(0.0 <= value <= 1.0 for value in result.competence.values())
    for item, posterior in result.posteriors.items():
        assert list(posterior) == list(LABELS)
        assert math.isclose(sum(posterior.values()), 1.0)
        assert result.labels[item] == max(LABELS, key=posterior.__getitem__)


@pytest.mark.parametrize("model", MODELS)
def test_deterministic_and_independent_of_row_order(model):
    rows = sparse_rows()
    first, again = model(rows), model(rows)
    assert first == again
    shuffled = model([rows[i] for i in np.random.default_rng(5).permutation(len(rows))])
    assert shuffled.labels == first.labels
    for annotator, value in first.competence.items():
        assert shuffled.competence[annotator] == pytest.approx(value, abs=1e-9)


@pytest.mark.parametrize("model", MODELS)
def test_iteration_cap_reports_not_converged(model):
    result = model(simulate(1)[0], max_iter=2)
    assert result.iterations == 2 and not result.converged


def test_mace_rejects_priors_that_are_not_positive():
    with pytest.raises(ValueError):
        mace([("a", 1, "A")], alpha=0)
    with pytest.raises(ValueError):
        mace([("a", 1, "A")], variational=False, smoothing=0)


# --- simulated annotators --------------------------------------------------------------------


@pytest.mark.parametrize("seed", [11, 12, 13])
@pytest.mark.parametrize("model", [dawid_skene, mace, lambda rows: mace(rows, variational=False)])
def test_junk_annotators_rank_lowest_and_the_truth_is_recovered(model, seed):
    rows, truth = simulate(seed)
    result = model(rows)
    assert result.converged
    ranked = sorted(result.competence, key=result.competence.__getitem__)
    assert set(ranked[:2]) == JUNK
    assert ranked[2:] == ["sloppy", "fair", "careful"]
    assert accuracy(result.labels, truth) >= accuracy(majority_vote(rows), truth)
