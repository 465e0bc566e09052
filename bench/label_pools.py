"""The pools replayed by bench/label_efficiency.py (its docstring describes them): the MMRB2
simulation (the real pairs and expert labels, simulated judges whose errors share a hidden
difficulty) and MJ-Bench's six scoring models on its quality and safety pairs; each task a
`Pool` of Y and the leave-one-out prediction f per judge and pair."""

import json
from dataclasses import dataclass, field

import numpy as np

from bench.common import MMRB2, ROOT
from metrics.judge_ppi import judge_sample, leave_one_out_predictions, side_shares

MJBENCH = ROOT.parent / "shared" / "datasets" / "mjbench"
MJBENCH_MODELS = [
    "aesthetics",
    "blipscore",
    "clipscore_v2",
    "hps_v2.1",
    "ImageReward",
    "pickscore_v1",
]
MJBENCH_SUBSETS = ["blur", "human", "mpii", "nsfw", "object_indoor", "toxic"]
MMRB2_SETS = ["t2i", "edit", "interleaved", "reasoning"]

# The MMRB2 simulation's judges and coefficients (logit scale), fixed before any replay.
SKILLS = np.linspace(0.55, 0.90, 13)
CLARITY_WEIGHT = 2.0
DIFFICULTY_SD = 3.0
SWEEP = [1.0, 2.0, 3.0, 4.0]
OWN_VIEW_SD = 0.75
POSITION_BIAS_MAX = 0.6
GRADE_VALUE = {"A": 1.0, "B": 0.5, "C": 0.0}


@dataclass
class Pool:
    """One task's pool: per judge Y and f on every pair (every pair carries the experts' label),
    and the panel's uncertainty per pair."""

    name: str
    judges: list[str]
    y: np.ndarray  # judges x pairs
    f: np.ndarray  # judges x pairs
    uncertainty: np.ndarray  # pairs
    consensus: float  # accuracy of the whole panel's soft majority
    skills: list[float | None] = field(default_factory=list)
    # What the product reads (metrics/judge_ppi.py): judge -> pair -> shares for A and B, the
    # leave-one-out predictions, and the experts' side per pair (pairs 0..size-1).
    shares: dict = field(default_factory=dict, repr=False)
    predictions: dict = field(default_factory=dict, repr=False)
    labels: dict = field(default_factory=dict, repr=False)

    @property
    def size(self) -> int:
        return int(self.y.shape[1])


def pool_from_choices(name: str, choices: dict, labels: dict, skills=None) -> Pool:
    """choices: judge -> pair -> letters in the pair's own frame (reverse already flipped)."""
    shares = {judge: {pair: side_shares(c) for pair, c in by_pair.items()}
              for judge, by_pair in choices.items()}  # fmt: skip
    predictions = leave_one_out_predictions(shares)
    judges = list(shares)
    samples = [judge_sample(shares[j], predictions[j], labels) for j in judges]
    pairs = sorted(labels)
    vote_a = np.array([sum(shares[j][p][0] for j in judges) for p in pairs])
    vote_b = np.array([sum(shares[j][p][1] for j in judges) for p in pairs])
    q = np.where(vote_a + vote_b > 0, vote_a / np.maximum(vote_a + vote_b, 1e-12), 0.5)
    correct_side = np.where(np.array([labels[p] == "A" for p in pairs]), q, 1 - q)
    consensus = float(np.mean((correct_side > 0.5) + 0.5 * (correct_side == 0.5)))
    return Pool(
        name=name,
        judges=judges,
        y=np.array([s.y for s in samples]),
        f=np.array([s.f_pool for s in samples]),
        uncertainty=1 - np.abs(2 * q - 1),
        consensus=consensus,
        skills=list(skills) if skills is not None else [None] * len(judges),
        shares=shares,
        predictions=predictions,
        labels=labels,
    )


# ---------------------------------------------------------------- MMRB2 simulation


def expert_clarity(pair: dict) -> float:
    """How clearly the real experts prefer the chosen response, 0 (split) to 1 (unanimous and
    strong)."""
    notes = pair["human_annotations"]
    if isinstance(notes, list):  # three 1..6 scores, > 3.5 means A
        return abs(sum(notes) / len(notes) - 3.5) / 2.5

    def grade(ratings: list) -> float:
        return sum(GRADE_VALUE[g] for g in ratings) / len(ratings) if ratings else 0.0

    a, b = grade(notes["response_a_ratings"]), grade(notes["response_b_ratings"])
    return min(abs(a - b), 1.0)


def _sigmoid(x: np.ndarray) -> np.ndarray:
    return 1.0 / (1.0 + np.exp(-x))


def _ability(skill: float, base: np.ndarray, bias: float) -> float:
    """The judge's ability whose expected accuracy over the pool (both orders) is `skill`."""
    low, high = -10.0, 10.0
    for _ in range(60):
        mid = (low + high) / 2
        accuracy = 0.5 * float(np.mean(_sigmoid(mid + base + bias) + _sigmoid(mid + base - bias)))
        low, high = (mid, high) if accuracy < skill else (low, mid)
    return (low + high) / 2


def simulate_mmrb2_task(task: str, rng: np.random.Generator, difficulty_sd: float) -> Pool:
    pairs = json.loads((MMRB2 / f"{task}_response_only.json").read_text())["pairs"]
    labels = {i: pair["chosen"] for i, pair in enumerate(pairs)}
    clarity = np.array([expert_clarity(pair) for pair in pairs])
    shared = CLARITY_WEIGHT * (clarity - clarity.mean()) + difficulty_sd * rng.standard_normal(
        len(pairs)
    )
    first_is_label = np.array([labels[i] == "A" for i in range(len(pairs))])
    choices: dict[str, dict[int, list[str]]] = {}
    for skill in SKILLS:
        base = shared + OWN_VIEW_SD * rng.standard_normal(len(pairs))
        bias = float(rng.uniform(-POSITION_BIAS_MAX, POSITION_BIAS_MAX))
        ability = _ability(float(skill), base, bias)
        # forward shows A first, reverse shows B first: the bias helps when the label is first
        forward = rng.random(len(pairs)) < _sigmoid(
            ability + base + np.where(first_is_label, bias, -bias)
        )
        reverse = rng.random(len(pairs)) < _sigmoid(
            ability + base + np.where(first_is_label, -bias, bias)
        )
        choices[f"sim-{skill:.3f}"] = {
            i: [_letter(labels[i], forward[i]), _letter(labels[i], reverse[i])]
            for i in range(len(pairs))
        }
    return pool_from_choices(task, choices, labels, skills=SKILLS)


def simulate_mmrb2(rng: np.random.Generator, difficulty_sd: float) -> list[Pool]:
    return [simulate_mmrb2_task(task, rng, difficulty_sd) for task in MMRB2_SETS]


def _letter(label: str, correct: bool) -> str:
    return label if correct else ("B" if label == "A" else "A")


# ---------------------------------------------------------------- MJ-Bench


def mjbench_pool(subsets: list[str] = MJBENCH_SUBSETS) -> Pool:
    """The six models' preferred image per pair, the subsets in one pool in file order (subset
    after subset, each file's rows in order: the order an import would give the pairs); image 0
    is A."""
    side = {"0": "A", "1": "B"}
    choices: dict[str, dict[int, list[str]]] = {model: {} for model in MJBENCH_MODELS}
    labels: dict[int, str] = {}
    for subset in subsets:
        offset = len(labels)
        for model in MJBENCH_MODELS:
            rows = json.loads(
                (MJBENCH / "personal" / "result" / model / f"{subset}0.0.json").read_text()
            )
            for i, row in enumerate(rows):
                choices[model][offset + i] = [side.get(row["pred"], "tie")]  # a tie is wrong
                if model == MJBENCH_MODELS[0]:
                    labels[offset + i] = side[row["label"]]
    name = "quality+safety" if subsets == MJBENCH_SUBSETS else "+".join(subsets)
    return pool_from_choices(name, choices, labels)


# ---------------------------------------------------------------- near-perfect judges


def near_perfect_pool(skill: float, rng: np.random.Generator, size: int, panel: int) -> Pool:
    """`panel` judges of accuracy `skill` with independent errors, one trial per pair; the
    first judge is the one measured."""
    labels = {i: "A" if heads else "B" for i, heads in enumerate(rng.random(size) < 0.5)}
    choices = {
        f"judge-{k}": {i: [_letter(labels[i], right)] for i, right in enumerate(correct)}
        for k, correct in enumerate(rng.random((panel, size)) < skill)
    }
    return pool_from_choices(f"skill {skill:.2f}", choices, labels, skills=[skill] * panel)
