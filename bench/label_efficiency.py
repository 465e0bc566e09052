"""Label efficiency of prediction-powered judge accuracy: how many expert ratings PPI++ saves
when estimating each judge's accuracy against the experts, replayed on real data; then the
judges' figures replayed as leads use them (stress settings) and what their validity costs.

usage: python -m bench.label_efficiency [--replays 1000] [--budgets 50 100 200 400] [--seed 0]
                                        [--only mmrb2|mjbench] [--difficulty 3.0]
                                        [--sweep 1 2 3 4] [--stress-replays 400]
                                        [--target 0.03] [--json]

A replay draws the rated pairs of a task's pool with a seeded numpy Generator and estimates
every judge's accuracy on the whole pool from them, as the product does: Y (the judge's share of
correct trials) and f (its expected correctness under the other judges' soft vote, leave-one-out)
from metrics/judge_ppi.py, the intervals from metrics/ppi.py, all at 95 %:
- classical: classical_mean(y, pool=M), the rated pairs' mean with the finite-population
  correction; a simple random sample (SRS) of n pairs, the same one for every judge;
- PPI: pool_mean(y, f_rated, f_pool) on that sample, from judge_ppi.MIN_RATED (50) pairs;
- active: active_mean on a Poisson sample, pair i rated with probability pi_i = min(1, t*w_i),
  w_i the panel's uncertainty 1 - |2q - 1| (q: every judge's soft vote for A) mixed with a
  uniform floor of 0.8 (the product's, judging/services/sampling.py) and of mean 1, t such
  that the expected size is n; from 100 pairs.
The truth is the judge's accuracy on the whole pool (mean Y over every pair). Per judge and
budget n (rated pairs per task): coverage of the truth, mean half-width, and the expert ratings
saved at equal width, 1 - n_method / n, where n_method = ratings_needed(s, h, pool=M) is what
the method needs to be as narrow as the classical interval at n: h the classical mean half-width
at n, s the method's spread at n (its mean half-width / (z * sqrt((1 - n/M) / n)); for PPI that
is the mean residual sd(y - lam * f), for active the SRS spread of equal width). Spreads are held
at their value at n, as the product's planner does (judge_ppi.plan).

1. MMRB2 simulation: the 4 x 1,000 real pairs with their real expert labels, and 13 simulated
   judges of accuracy 0.55 to 0.90, each answering forward and reverse. A Rasch (one-parameter
   IRT) model: logit P(correct) = ability_j + 2.0 * (c_i - mean c) + s_d * d_i + 0.75 * e_ij
   +- b_j, where c_i is the real experts' clarity on the pair (scores: |mean - 3.5| / 2.5, so a
   2-1 split or a weak lean is hard; reasoning: chosen grade minus the other's, A=1, B=0.5,
   C or ungraded 0), d_i ~ N(0, 1) a hidden difficulty shared by every judge (s_d its sd,
   --difficulty), e_ij ~ N(0, 1) the judge's own view of the pair (shared by its two orders),
   b_j ~ U(-0.6, 0.6) a position bias (+ when the preferred response is shown first);
   ability_j is set so that the judge's expected accuracy on the task is its skill.
   The clarity, own-view and bias coefficients were fixed before any replay. The hidden
   difficulty's sd sets how correlated the judges' errors are, and the savings depend on it
   most. The first guess, 1.0, made the panel's majority (0.88) more accurate than 12 of the 13
   judges, which correlated real judges do not allow: MJ-Bench's six real models have a majority
   of 0.750, below the best (0.823), 3 of 6 models under it, 8 pp above the mean model. The
   default, 3.0, was chosen on that criterion (majority 0.77, 7-8 of 13 judges under it, 5 pp
   above the mean judge); 2.0 and 4.0 fit it about as loosely, so --sweep replays budget 100 (or
   the first budget from 100) at 1, 2, 3 and 4 beside the headline.
2. MJ-Bench: six scoring models' real outputs on its 1,331 quality and safety pairs (one pool),
   each model a judge with one trial per pair, MJ-Bench's label the experts'. Every label is
   image 0 by construction of these subsets, so this checks the machinery on real judge outputs;
   the MMRB2 simulation is the headline.
Targets: coverage >= 93 % from 100 rated pairs; >= 15 % fewer ratings at equal width for the
median judge on the MMRB2 simulation at 100 rated pairs per task; never worse than classical.

Stress settings (--stress-replays random orders each, 0: none). "Old" is the fixed-n 95 % PPI
interval the judges page showed (ppi.pool_mean: no variance floor, recomputed at every look);
"new" is the product's figure now (judge_ppi.judge_sample then estimate, or _path and looks at
every look: the accuracy on the kept pairs, variance floor, monitored on the target half-width
--target, the project's default 0.03), on the same draws:
1. import order: MJ-Bench's pool rated in file order (the first n pairs: blur first) and in a
   random order, at 50/100/200 rated pairs per model;
2. continuous looks: a look after every rating from 50 to 400, on both datasets: per judge the
   chance that some interval shown misses its accuracy, and the coverage where the lead stops;
3. near-perfect judges at 50 rated pairs: simulated 95/97/99 % judges (three of a skill with
   independent errors, 1,000 pairs, a fresh pool every 20 draws) and hps_v2.1 on MJ-Bench's
   blur subset (350 pairs, 98.9 %);
4. dropped pairs: 28 % of each pool dropped by the experts (drawn with weights half even, half
   the panel's split on the pair), 400 rated pairs: bias and coverage of the accuracy on the
   kept pairs; the old interval counts the kept rated pairs against the whole pool's f.
Random orders in 1 are those of 2, read at 50/100/200. The old fixed-n figures are computed
for every prefix of every order at once and checked against pool_mean and classical_mean; the
new ones run the product's functions on each order.
The cost of validity: the continuous-looks replays also give every judge's mean standard errors
at each budget n. From them, the rated pairs each design needs for an interval as narrow as the
classical fixed-n one at n (spreads held at n, as the planner holds them): the old fixed-n PPI,
the same with the variance floor, the monitored PPI (final at that width: its critical value
c = 2.2492 in place of 1.96) and classical monitored the same way.
Needs ../shared/datasets beside the checkout.
"""

import argparse
import json
import math
import sys
import time
from dataclasses import dataclass
from statistics import NormalDist

import numpy as np

from bench.label_pools import (
    DIFFICULTY_SD,
    MJBENCH,
    MMRB2,
    SKILLS,
    SWEEP,
    Pool,
    mjbench_pool,
    near_perfect_pool,
    simulate_mmrb2,
)
from metrics import sequential
from metrics.judge_ppi import (
    MIN_RATED,
    Counted,
    JudgeSample,
    _path,
    estimate,
    judge_sample,
    looks,
)
from metrics.ppi import active_mean, classical_mean, pool_mean, ratings_needed

DEFAULT_BUDGETS = [50, 100, 200, 400]
ACTIVE_FROM = 100  # rated pairs, as judge_ppi.MIN_RATED_ACTIVE: fewer, no active interval
UNIFORM_FLOOR = 0.8  # share of the active weight spread uniformly, so every pair can be drawn
Z = NormalDist().inv_cdf(0.975)


# ---------------------------------------------------------------- replays


def inclusion_probabilities(weights: np.ndarray, n: int) -> np.ndarray:
    """min(1, t * w) with t such that the probabilities sum to n."""
    pi = np.zeros_like(weights)
    capped = np.zeros(weights.size, dtype=bool)
    while True:
        t = (n - capped.sum()) / weights[~capped].sum()
        pi = np.where(capped, 1.0, t * weights)
        over = (pi > 1.0) & ~capped
        if not over.any():
            return np.minimum(pi, 1.0)
        capped |= over


def active_weights(uncertainty: np.ndarray) -> np.ndarray:
    spread = uncertainty.mean()
    informative = uncertainty / spread if spread > 0 else np.ones_like(uncertainty)
    return (1 - UNIFORM_FLOOR) * informative + UNIFORM_FLOOR


def replay_pool(pool: Pool, budgets: list[int], replays: int, rng: np.random.Generator) -> dict:
    """Per budget, per judge: coverage and mean half-width of each estimator, ratings saved."""
    truth = pool.y.mean(axis=1)
    weights = active_weights(pool.uncertainty)
    out = {}
    for n in budgets:
        if n >= pool.size:
            continue
        pi = inclusion_probabilities(weights, n) if n >= ACTIVE_FROM else None
        runs = {
            m: np.full((len(pool.judges), replays), np.nan) for m in ("classical", "ppi", "active")
        }
        covered = {m: np.zeros((len(pool.judges), replays), dtype=bool) for m in runs}
        wider = 0
        for r in range(replays):
            rated = rng.choice(pool.size, size=n, replace=False)
            drawn = np.flatnonzero(rng.random(pool.size) < pi) if pi is not None else None
            for j in range(len(pool.judges)):
                y, f = pool.y[j], pool.f[j]
                results = {"classical": classical_mean(y[rated], pool=pool.size)}
                if n >= MIN_RATED:
                    results["ppi"] = pool_mean(y[rated], f[rated], f)
                    # never wider by construction (lam minimises the residual variance)
                    wider += results["ppi"].std_error > results["classical"].std_error * (1 + 1e-12)
                if drawn is not None and drawn.size >= 2:
                    results["active"] = active_mean(y[drawn], f[drawn], pi[drawn], f)
                for method, est in results.items():
                    runs[method][j, r] = (est.high - est.low) / 2
                    covered[method][j, r] = est.low <= truth[j] <= est.high
        out[n] = _budget_figures(pool, n, runs, covered, wider, replays)
    return out


def _budget_figures(
    pool: Pool, n: int, runs: dict, covered: dict, wider: int, replays: int
) -> dict:
    scale = Z * math.sqrt((1 - n / pool.size) / n)
    judges = {}
    for j, judge in enumerate(pool.judges):
        classical_half = float(np.nanmean(runs["classical"][j]))
        row: dict = {}
        for method in runs:
            done = ~np.isnan(runs[method][j])
            if not done.any():
                row[method] = None
                continue
            half = float(runs[method][j][done].mean())
            figures = {"coverage": float(covered[method][j][done].mean()), "half_width": half}
            if method != "classical":
                needed = ratings_needed(half / scale, classical_half, pool=pool.size)
                figures["saved"] = 1 - needed / n
            row[method] = figures
        judges[judge] = row
    return {"judges": judges, "ppi_wider_than_classical": int(wider), "replays": replays}


# ---------------------------------------------------------------- summaries


def judge_roles(pool: Pool) -> dict[str, list[str]]:
    """The judge(s) of median accuracy, the best, and those weaker than the panel's majority."""
    accuracy = pool.y.mean(axis=1)
    order = [pool.judges[j] for j in np.argsort(accuracy, kind="stable")]
    k = len(order)
    median = order[(k - 1) // 2 : k // 2 + 1]
    weak = [pool.judges[j] for j in range(k) if accuracy[j] < pool.consensus]
    return {"median": median, "best": [order[-1]], "weak": weak, "all": order}


def summarise(pools: list[Pool], replayed: list[dict], budgets: list[int]) -> dict:
    """Per budget over every task and judge: coverage (mean, worst), mean half-width, and the
    savings of each role (mean over its judges, then over tasks)."""
    summary = {}
    for n in budgets:
        per_task = [
            (pool, done[n]) for pool, done in zip(pools, replayed, strict=True) if n in done
        ]
        if not per_task:
            continue
        entry: dict = {"coverage": {}, "half_width": {}, "saved": {}}
        for method in ("classical", "ppi", "active"):
            rows = [b["judges"][j][method] for _, b in per_task for j in b["judges"]]
            rows = [row for row in rows if row is not None]
            if not rows:
                entry["coverage"][method] = entry["half_width"][method] = None
                continue
            entry["coverage"][method] = {
                "mean": float(np.mean([row["coverage"] for row in rows])),
                "worst": float(np.min([row["coverage"] for row in rows])),
            }
            entry["half_width"][method] = float(np.mean([row["half_width"] for row in rows]))
            if method != "classical":
                entry["saved"][method] = _role_savings(per_task, method)
        entry["ppi_wider_than_classical"] = sum(b["ppi_wider_than_classical"] for _, b in per_task)
        summary[n] = entry
    return summary


def _role_savings(per_task: list, method: str) -> dict:
    saved: dict = {}
    for role in ("median", "best", "weak", "all"):
        task_means = []
        for pool, figures in per_task:
            values = [figures["judges"][j][method]["saved"] for j in judge_roles(pool)[role]]
            if values:
                task_means.append(float(np.mean(values)))
        saved[role] = float(np.mean(task_means)) if task_means else None
    saved["worst"] = min(
        figures["judges"][j][method]["saved"] for _, figures in per_task for j in figures["judges"]
    )
    return saved


# ---------------------------------------------------------------- output


def _pct(value, digits: int = 1) -> str:
    return "—" if value is None else f"{100 * value:.{digits}f}"


def _cover(entry: dict, method: str) -> str:
    """Coverage of one estimator: mean over judges and tasks / worst judge-task."""
    figures = entry["coverage"][method]
    return "—" if figures is None else f"{_pct(figures['mean'])}/{_pct(figures['worst'], 0)}"


def _saved(entry: dict, role: str) -> str:
    """Ratings saved at equal width by PPI | by active, for one role."""
    ppi, active = entry["saved"].get("ppi", {}), entry["saved"].get("active", {})
    return f"{_pct(ppi.get(role)):>5} | {_pct(active.get(role)):>5}"


def _coverages(entry: dict) -> str:
    return " ".join(f"{_cover(entry, m):>9}" for m in ("classical", "ppi", "active"))


def _per_judge_cell(result: dict, judge: str, n: int) -> str:
    rows = [task[n]["judges"][judge]["ppi"] for task in result["replayed"] if n in task]
    rows = [row for row in rows if row]
    if not rows:
        return "—"
    saved = np.mean([row["saved"] for row in rows])
    coverage = np.mean([row["coverage"] for row in rows])
    return f"{_pct(saved, 0)} ({_pct(coverage, 0)})"


def print_dataset(title: str, notes: list[str], pools: list[Pool], result: dict) -> None:
    print(f"\n{title}")
    for note in notes:
        print(f"  {note}")
    for pool in pools:
        weak = judge_roles(pool)["weak"]
        print(
            f"  {pool.name}: {pool.size} pairs, panel majority accuracy {pool.consensus:.3f}, "
            f"{len(weak)} of {len(pool.judges)} judges below it"
        )
    print(
        "\n  rated  coverage % of the 95 % interval  mean half-width pp  "
        "ratings saved at equal width, % (PPI | active)"
    )
    print(
        "  /task  classical       PPI    active  class.  PPI active  "
        "median        best          weak          worst judge"
    )
    for n, entry in result["summary"].items():
        widths = " ".join(
            f"{_pct(entry['half_width'][m]):>5}" for m in ("classical", "ppi", "active")
        )
        roles = "  ".join(_saved(entry, role) for role in ("median", "best", "weak", "worst"))
        print(f"  {n:>5}  {_coverages(entry)}  {widths}  {roles}")
    print(
        "  (coverage: mean over judges and tasks / worst judge-task; Monte Carlo sd of one "
        f"judge's coverage {_pct(math.sqrt(0.95 * 0.05 / result['replays']))} pp)"
    )
    print("\n  per judge: ratings saved by PPI at equal width % (its coverage %), mean over tasks")
    budgets = list(result["summary"])
    header = "  ".join(f"{n:>10}" for n in budgets)
    print(f"  {'judge':16} {'skill':>5} {'acc.':>6}  weak  {header}")
    for j, judge in enumerate(pools[0].judges):
        accuracy = np.mean([pool.y[j].mean() for pool in pools])
        weak = np.mean([pool.y[j].mean() < pool.consensus for pool in pools])
        skill = pools[0].skills[j]
        skill_text = "" if skill is None else f"{skill:.3f}"
        cells = "  ".join(f"{_per_judge_cell(result, judge, n):>10}" for n in budgets)
        print(f"  {judge:16} {skill_text:>5} {accuracy:>6.3f}  {weak:>4.0%}  {cells}")


def active_headroom(pools: list[Pool], n: int) -> dict:
    """What any active choice could gain at n rated pairs per task, computed exactly rather
    than replayed: the Horvitz-Thompson variance of each judge's residual (y - lam*f - c, the
    line fitted on the whole pool) under a design, over its variance under a uniform one
    (below 1: the design helps that judge). Two designs: the product's weights, and the best
    any function of what is known before a rating could give (the panel's split and how many
    judges answered alike in both orders, in 5 x 5 bins), fitted on the truth itself: a
    ceiling no product reaches. Means over judges and tasks, and the best judge's."""
    ratios: dict[str, list[float]] = {"product": [], "ceiling": []}
    best: dict[str, list[float]] = {"product": [], "ceiling": []}
    for pool in pools:
        residual2 = np.empty_like(pool.y)
        for j in range(len(pool.judges)):
            line = np.vstack([pool.f[j], np.ones(pool.size)]).T
            coefficients, *_ = np.linalg.lstsq(line, pool.y[j], rcond=None)
            residual2[j] = (pool.y[j] - line @ coefficients) ** 2
        consistent = (pool.y != 0.5).mean(axis=0)  # a judge split across orders scores 0.5
        cell = 5 * np.digitize(consistent, [0.5, 0.7, 0.85, 0.95]) + np.digitize(
            pool.uncertainty, [0.2, 0.4, 0.6, 0.8]
        )
        spread = residual2.mean(axis=0)
        ceiling = np.sqrt([spread[cell == c].mean() for c in cell]) + 1e-9
        uniform = np.full(pool.size, n / pool.size)
        strongest = int(np.argmax(pool.y.mean(axis=1)))
        for name, weights in (("product", active_weights(pool.uncertainty)), ("ceiling", ceiling)):
            pi = inclusion_probabilities(weights, n)
            ratio = ((1 - pi) / pi * residual2).sum(axis=1) / (
                (1 - uniform) / uniform * residual2
            ).sum(axis=1)
            ratios[name].extend(ratio.tolist())
            best[name].append(float(ratio[strongest]))
    return {
        name: {"mean": float(np.mean(ratios[name])), "best_judge": float(np.mean(best[name]))}
        for name in ratios
    }


def sweep_budget(budgets: list[int]) -> int:
    return next((n for n in budgets if n >= ACTIVE_FROM), budgets[-1])


def sweep(values: list[float], n: int, replays: int, seed: int) -> list[dict]:
    """The MMRB2 simulation at budget n for each hidden-difficulty sd: how the savings follow
    the judges' error correlation (the panel majority's accuracy shows it)."""
    rows = []
    for index, difficulty in enumerate(values):
        rng = np.random.default_rng([seed, 3, index])
        pools = simulate_mmrb2(rng, difficulty)
        entry = run_dataset(pools, [n], replays, rng)["summary"][n]
        rows.append({
            "difficulty_sd": difficulty,
            "consensus_accuracy": float(np.mean([pool.consensus for pool in pools])),
            "judges_below_consensus": float(np.mean([len(judge_roles(p)["weak"]) for p in pools])),
            "rated": n,
            "headroom": active_headroom(pools, n),
            **entry,
        })  # fmt: skip
    return rows


def print_sweep(rows: list[dict], judges: int, replays: int) -> None:
    print(
        f"\nMMRB2 simulation, sensitivity to the hidden difficulty (error correlation): "
        f"{rows[0]['rated']} rated pairs per task, {replays} replays"
    )
    print("  difficulty  majority  judges   coverage % mean/worst          saved % PPI | active")
    print(
        "          sd  accuracy  under it classical       PPI    active  "
        "median        best          weak"
    )
    for row in rows:
        roles = "  ".join(_saved(row, role) for role in ("median", "best", "weak"))
        print(
            f"  {row['difficulty_sd']:>10.1f}  {row['consensus_accuracy']:>8.3f}  "
            f"{row['judges_below_consensus']:>4.1f}/{judges}  {_coverages(row)}  {roles}"
        )
    print(
        "\n  active choice's headroom (exact): the residual's variance under the design over a"
        " uniform one,\n  mean over judges (best judge); ceiling = the best design any"
        " pre-rating signal allows, fitted on the truth"
    )
    for row in rows:
        room = row["headroom"]
        print(
            f"  sd {row['difficulty_sd']:.1f}: product {room['product']['mean']:.3f}"
            f" ({room['product']['best_judge']:.3f}), ceiling {room['ceiling']['mean']:.3f}"
            f" ({room['ceiling']['best_judge']:.3f})"
        )


# ---------------------------------------------------------------- stress settings
#
# The judges' figures replayed as leads use them, the fixed-n interval the product showed before
# ("old": metrics/ppi.py::pool_mean at 95 %, no variance floor, recomputed at every look) beside
# what it shows now ("new": metrics/judge_ppi.py, judge_sample then estimate, or _path and looks
# at every look: the accuracy on the kept pairs, with its variance floor, monitored on the
# project's target), on the same draws.

STRESS_REPLAYS = 400
PRODUCT_TARGET = 0.03  # the project's default target half-width (projects/models/project.py)
ORDER_BUDGETS = [50, 100, 200]
LAST_LOOK = 400  # the lead looks after every rating from MIN_RATED to here
NEAR_PERFECT_SKILLS = [0.95, 0.97, 0.99]
NEAR_PERFECT_RATED = 50
NEAR_PERFECT_POOL = 1000  # pairs, `NEAR_PERFECT_PANEL` judges of the same skill
NEAR_PERFECT_PANEL = 3
NEW_POOL_EVERY = 20  # draws per simulated pool: building one costs more than 20 replays
# floor_only: the new estimate ± 1.96 SE, its variance floor without the monitoring
NEAR_PERFECT_FIGURES = ("old", "new", "floor_only", "old_classical", "new_classical")
DROPPED_SHARE = 0.28  # of the pool, the middle of the 27-30 % seen in real projects
DROPPED_AT = 400
# The fixed-n level whose critical value is the monitored design's c: ratings_needed at this
# level gives the rated pairs at which the monitored figure is final at a half-width.
DESIGN_ALPHA = 2 * (1 - NormalDist().cdf(sequential.critical_value()))


def product_sample(pool: Pool, j: int, order: np.ndarray, kept=None) -> JudgeSample:
    """Judge j's sample on the rated pairs `order` (in draw order), `kept`: the pairs the
    experts keep (default: all). What judge_sample builds from the shares and the experts'
    outcomes, read off the pool's arrays, which hold the same Y and f (`check_sample` holds
    the two equal): numpy arrays, as uniform_path reads them."""
    keeps = np.ones(order.size) if kept is None else kept[order].astype(np.float64)
    return JudgeSample(
        y=pool.y[j][order] * keeps,  # 0 on a dropped pair, as judge_sample sets it
        kept=keeps,
        f_rated=pool.f[j][order],
        f_pool=pool.f[j],
        counted=Counted(order.tolist()),
    )


def check_sample(pool: Pool, j: int, order: np.ndarray, kept=None) -> None:
    judge = pool.judges[j]
    outcomes = pool.labels
    if kept is not None:
        outcomes = {p: side if kept[p] else None for p, side in pool.labels.items()}
    counted = Counted(order.tolist())
    built = judge_sample(pool.shares[judge], pool.predictions[judge], outcomes, counted)
    mine = product_sample(pool, j, order, kept)
    for name in ("y", "kept", "f_rated", "f_pool"):
        assert np.array_equal(np.asarray(getattr(built, name)), getattr(mine, name)), name


@dataclass(frozen=True)
class FixedN:
    """The old fixed-n figures at every prefix of each draw (replays x rated pairs)."""

    estimate: np.ndarray
    std_error: np.ndarray
    classical_std_error: np.ndarray


def fixed_n(pool: Pool, j: int, orders: np.ndarray, kept=None) -> FixedN:
    """pool_mean (PPI) and classical_mean(pool=M) at every prefix of every draw at once, from
    cumulative moments; with `kept`, on the kept rated pairs only, against the whole pool's f
    (the old figure left the dropped pairs in its pool). `check_fixed_n` holds it to those
    functions."""
    weight = np.ones(orders.shape) if kept is None else kept[orders].astype(np.float64)
    y, f = pool.y[j][orders], pool.f[j][orders]
    k = np.cumsum(weight, axis=1)

    def mean(values: np.ndarray) -> np.ndarray:
        return np.cumsum(weight * values, axis=1) / k

    with np.errstate(invalid="ignore", divide="ignore"):
        m_y, m_f = mean(y), mean(f)
        var_y, var_f, cov = mean(y * y) - m_y**2, mean(f * f) - m_f**2, mean(y * f) - m_y * m_f
        lam = np.where(var_f > 1e-15, np.clip(cov / var_f, 0.0, 1.0), 0.0)
        residual = np.maximum(var_y + lam**2 * var_f - 2 * lam * cov, 0.0)
        scale = (1 - k / pool.size) / (k - 1)  # the finite pool, and ddof 1
        return FixedN(
            estimate=m_y + lam * (float(pool.f[j].mean()) - m_f),
            std_error=np.sqrt(scale * residual),
            classical_std_error=np.sqrt(scale * np.maximum(var_y, 0.0)),
        )


def check_fixed_n(pool: Pool, j: int, orders: np.ndarray, figures: FixedN, kept=None) -> None:
    for n in (MIN_RATED, orders.shape[1]):
        rated = orders[0, :n] if kept is None else orders[0, :n][kept[orders[0, :n]]]
        ppi = pool_mean(pool.y[j][rated], pool.f[j][rated], pool.f[j])
        classical = classical_mean(pool.y[j][rated], pool=pool.size)
        assert math.isclose(figures.estimate[0, n - 1], ppi.estimate, abs_tol=1e-9)
        assert math.isclose(figures.std_error[0, n - 1], ppi.std_error, abs_tol=1e-9)
        assert math.isclose(
            figures.classical_std_error[0, n - 1], classical.std_error, abs_tol=1e-9
        )


def random_orders(pool: Pool, replays: int, length: int, rng: np.random.Generator) -> np.ndarray:
    """`replays` random serving orders of the pool, the first `length` pairs of each."""
    return np.array([rng.permutation(pool.size)[:length] for _ in range(replays)])


def _covers(low, high, truth):
    return (low <= truth) & (truth <= high)


def _spread(values) -> dict:
    """Mean over judges (and tasks) and the worst (lowest) one."""
    return {"mean": float(np.mean(values)), "worst": float(np.min(values))}


def import_order(pool: Pool, target: float, random_order: dict) -> dict:
    """The pool rated in file order (the old default: the first n pairs imported) at each of
    ORDER_BUDGETS rated pairs per model, beside the same budgets in a random order (the new
    default: read off the continuous-looks replays, `random_order`)."""
    truth = pool.y.mean(axis=1)
    in_file = np.arange(max(ORDER_BUDGETS))
    old = [fixed_n(pool, j, in_file[None, :]) for j in range(len(pool.judges))]
    out = {}
    for n in ORDER_BUDGETS:
        rows = {}
        for j, judge in enumerate(pool.judges):
            value, error = old[j].estimate[0, n - 1], old[j].std_error[0, n - 1]
            new = estimate(product_sample(pool, j, in_file[:n]), target=target)
            rows[judge] = {
                "truth": float(truth[j]),
                "old": {
                    "estimate": float(value),
                    "low": float(value - Z * error),
                    "high": float(value + Z * error),
                    "z": float((value - truth[j]) / error) if error > 0 else None,
                },
                "new": {"estimate": new["estimate"], "low": new["low"], "high": new["high"]},
            }
        zs = [abs(row["old"]["z"]) for row in rows.values() if row["old"]["z"] is not None]
        missed = {
            f"{m}_missed": sum(
                not _covers(row[m]["low"], row[m]["high"], row["truth"]) for row in rows.values()
            )
            for m in ("old", "new")
        }
        out[n] = {
            "file_order": {"judges": rows, **missed, "old_worst_z": max(zs) if zs else None},
            "random_order": random_order[n],
        }
    return out


def continuous_looks(
    pools: list[Pool], budgets: list[int], replays: int, target: float, rng: np.random.Generator
) -> tuple[dict, list[dict]]:
    """Random orders of each pool, looked at after every rating from MIN_RATED to LAST_LOOK: per
    judge the chance that some interval shown misses its accuracy, old (the fixed-n interval
    at every look) and new (judge_ppi.looks: monitored, frozen once final), and the coverage
    where the lead stops (old: the first look at the target width; new: the final figure, or
    the last look's). The same draws give, at the budgets and ORDER_BUDGETS, the coverage and
    width of what each look shows, and each judge's mean standard errors (the cost of
    validity). Returns the figures and, per pool, those standard errors."""
    rows, errors = [], []
    checked: dict = {}  # look -> method -> (coverage, half-width) per judge of every pool
    for pool in pools:
        last = min(pool.size, max(LAST_LOOK, *budgets))
        shown = min(LAST_LOOK, last) - MIN_RATED + 1  # the looks from MIN_RATED on
        at = sorted(n for n in {*budgets, *ORDER_BUDGETS} if MIN_RATED <= n <= last)
        judges, truth = len(pool.judges), pool.y.mean(axis=1)
        orders = random_orders(pool, replays, last, rng)
        shape = (judges, replays)
        missed = {"old": np.zeros(shape, bool), "new": np.zeros(shape, bool)}
        stopped = {"old": np.zeros(shape, bool), "new": np.zeros(shape, bool)}
        final_at = np.full(shape, np.nan)
        covered = {m: np.zeros((len(at), *shape), bool) for m in ("old", "new")}
        halves = {m: np.zeros((len(at), *shape)) for m in ("old", "new")}
        kinds = ("old", "old_classical", "new", "new_classical")
        se = {key: np.zeros((len(at), judges)) for key in kinds}
        for j in range(judges):
            old = fixed_n(pool, j, orders)
            check_fixed_n(pool, j, orders, old)
            check_sample(pool, j, orders[0])
            value = old.estimate[:, MIN_RATED - 1 :]
            half = Z * old.std_error[:, MIN_RATED - 1 :]
            wrong = np.abs(value - truth[j]) > half
            missed["old"][j] = wrong[:, :shown].any(axis=1)
            narrow = half[:, :shown] <= target
            stop = np.where(narrow.any(axis=1), narrow.argmax(axis=1), shown - 1)
            stopped["old"][j] = ~wrong[np.arange(replays), stop]
            for b, n in enumerate(at):
                covered["old"][b, j] = ~wrong[:, n - MIN_RATED]
                halves["old"][b, j] = half[:, n - MIN_RATED]
                se["old"][b, j] = old.std_error[:, n - 1].mean()
                se["old_classical"][b, j] = old.classical_std_error[:, n - 1].mean()
            new_se = np.zeros((replays, len(at), 2))
            for r in range(replays):
                sample = product_sample(pool, j, orders[r])
                path = _path(sample, MIN_RATED)
                seen = looks(sample, path, target=target, least=MIN_RATED)
                wrong = (seen.low > truth[j]) | (seen.high < truth[j])
                missed["new"][j, r] = wrong[:shown].any()
                stopped["new"][j, r] = not wrong[shown - 1]  # frozen from the final look on
                if seen.final_at is not None and seen.final_at < MIN_RATED + shown:
                    final_at[j, r] = seen.final_at
                for b, n in enumerate(at):
                    covered["new"][b, j, r] = not wrong[n - MIN_RATED]
                    halves["new"][b, j, r] = (seen.high - seen.low)[n - MIN_RATED] / 2
                    new_se[r, b] = path.std_error[n - 1], path.classical_std_error[n - 1]
            se["new"][:, j], se["new_classical"][:, j] = new_se.mean(axis=0).T
        errors.append({"at": at, **se})
        for b, n in enumerate(at):
            for m in ("old", "new"):
                per_judge = checked.setdefault(n, {}).setdefault(m, ([], []))
                per_judge[0].extend(covered[m][b].mean(axis=1))
                per_judge[1].extend(halves[m][b].mean(axis=1))
        rows.append({
            "pool": pool.name,
            "judges": {
                judge: {
                    "accuracy": float(truth[j]),
                    "any_look_missed": {m: float(missed[m][j].mean()) for m in missed},
                    "covered_where_stopped": {m: float(stopped[m][j].mean()) for m in stopped},
                    "final_by_last_look": float(np.isfinite(final_at[j]).mean()),
                    "median_final_at": float(np.nanmedian(final_at[j]))
                    if np.isfinite(final_at[j]).any() else None,
                }
                for j, judge in enumerate(pool.judges)
            },
        })  # fmt: skip
    every = [row for task in rows for row in task["judges"].values()]
    summary = {
        "any_look_missed": {
            m: {
                "mean": float(np.mean([r["any_look_missed"][m] for r in every])),
                "worst": float(np.max([r["any_look_missed"][m] for r in every])),
            }
            for m in ("old", "new")
        },
        "covered_where_stopped": {
            m: _spread([r["covered_where_stopped"][m] for r in every]) for m in ("old", "new")
        },
        "final_by_last_look": float(np.mean([r["final_by_last_look"] for r in every])),
    }
    at_looks = {
        n: {
            m: {"coverage": _spread(cover), "half_width": float(np.mean(width))}
            for m, (cover, width) in by_method.items()
        }
        for n, by_method in sorted(checked.items())
    }
    looked = {"tasks": rows, "summary": summary, "looks": [MIN_RATED, LAST_LOOK], "at": at_looks}
    return looked, errors


def near_perfect(
    replays: int, target: float, rng: np.random.Generator, blur: Pool | None
) -> list[dict]:
    """Coverage at NEAR_PERFECT_RATED rated pairs of simulated near-perfect judges (a fresh
    pool every NEW_POOL_EVERY draws) and, when MJ-Bench is here, of hps_v2.1 on its blur
    subset: old (no floor) and new, PPI and classical, and how often the old one is zero-wide."""
    cases = [(f"simulated {skill:.0%}", skill, None) for skill in NEAR_PERFECT_SKILLS]
    if blur is not None:
        cases.append(("hps_v2.1, MJ-Bench blur", None, blur))
    rows = []
    for name, skill, real in cases:
        hits = np.zeros((len(NEAR_PERFECT_FIGURES), replays), dtype=bool)
        zero = np.zeros(replays, dtype=bool)
        halves = np.zeros((2, replays))
        for start in range(0, replays, NEW_POOL_EVERY):
            pool = real or near_perfect_pool(skill, rng, NEAR_PERFECT_POOL, NEAR_PERFECT_PANEL)
            j = 0 if real is None else pool.judges.index("hps_v2.1")
            truth = float(pool.y[j].mean())
            draws = range(start, min(start + NEW_POOL_EVERY, replays))
            orders = random_orders(pool, len(draws), NEAR_PERFECT_RATED, rng)
            old = fixed_n(pool, j, orders)
            value, error = old.estimate[:, -1], old.std_error[:, -1]
            classical = Z * old.classical_std_error[:, -1]
            for r, order in zip(draws, orders, strict=True):
                new = estimate(product_sample(pool, j, order), target=target)
                hits[:, r] = (
                    abs(value[r - start] - truth) <= Z * error[r - start],
                    _covers(new["low"], new["high"], truth),
                    abs(new["estimate"] - truth) <= Z * new["std_error"],
                    abs(pool.y[j][order].mean() - truth) <= classical[r - start],
                    _covers(new["classical_low"], new["classical_high"], truth),
                )
                zero[r] = error[r - start] == 0
                halves[:, r] = Z * error[r - start], (new["high"] - new["low"]) / 2
        rows.append({
            "judge": name,
            "accuracy": skill if real is None else float(real.y[j].mean()),
            "coverage": {
                key: float(hits[k].mean())
                for k, key in enumerate(NEAR_PERFECT_FIGURES)
            },
            "old_zero_width": float(zero.mean()),
            "half_width": {"old": float(halves[0].mean()), "new": float(halves[1].mean())},
        })  # fmt: skip
    return rows


def dropped_outcomes(pool: Pool, rng: np.random.Generator) -> np.ndarray:
    """Which pairs the experts keep: DROPPED_SHARE of the pool dropped, drawn with weights half
    even and half following the panel's split on the pair (the experts' span and the judges'
    split go together, not perfectly: a pair where every judge agrees can be dropped)."""
    weights = 0.5 + 0.5 * pool.uncertainty / pool.uncertainty.mean()
    size = round(DROPPED_SHARE * pool.size)
    dropped = rng.choice(pool.size, size=size, replace=False, p=weights / weights.sum())
    kept = np.ones(pool.size, dtype=bool)
    kept[dropped] = False
    return kept


def dropped_pairs(pools: list[Pool], replays: int, target: float, rng: np.random.Generator) -> dict:
    """DROPPED_AT rated pairs of pools where the experts drop pairs: bias and coverage of each
    judge's accuracy on the kept pairs, old (dropped pairs in the pool's f, kept rated pairs
    only) and new (judge_sample with outcome None on the dropped ones, then estimate)."""
    rows = []
    for pool in pools:
        kept = dropped_outcomes(pool, rng)
        truth = np.array([pool.y[j][kept].mean() for j in range(len(pool.judges))])
        orders = random_orders(pool, replays, DROPPED_AT, rng)
        errors = np.zeros((2, len(pool.judges), replays))
        hits = np.zeros((2, len(pool.judges), replays), dtype=bool)
        halves = np.zeros((2, len(pool.judges), replays))
        for j in range(len(pool.judges)):
            old = fixed_n(pool, j, orders, kept)
            check_fixed_n(pool, j, orders, old, kept)
            check_sample(pool, j, orders[0], kept)
            errors[0, j] = old.estimate[:, -1] - truth[j]
            halves[0, j] = Z * old.std_error[:, -1]
            hits[0, j] = np.abs(errors[0, j]) <= halves[0, j]
            for r in range(replays):
                new = estimate(product_sample(pool, j, orders[r], kept), target=target)
                errors[1, j, r] = new["estimate"] - truth[j]
                hits[1, j, r] = _covers(new["low"], new["high"], truth[j])
                halves[1, j, r] = (new["high"] - new["low"]) / 2
        rows.append({
            "pool": pool.name,
            "dropped": float(1 - kept.mean()),
            "judges": {
                judge: {
                    "accuracy_kept": float(truth[j]),
                    **{
                        m: {
                            "bias": float(errors[k, j].mean()),
                            "bias_noise": float(errors[k, j].std() / math.sqrt(replays)),
                            "coverage": float(hits[k, j].mean()),
                            "half_width": float(halves[k, j].mean()),
                        }
                        for k, m in enumerate(("old", "new"))
                    },
                }
                for j, judge in enumerate(pool.judges)
            },
        })  # fmt: skip
    every = [row for task in rows for row in task["judges"].values()]
    summary = {
        m: {
            "bias_mean": float(np.mean([r[m]["bias"] for r in every])),
            "bias_worst": float(max((r[m]["bias"] for r in every), key=abs)),
            "coverage": _spread([r[m]["coverage"] for r in every]),
            "half_width": float(np.mean([r[m]["half_width"] for r in every])),
        }
        for m in ("old", "new")
    }
    dropped = [task["dropped"] for task in rows]
    summary["dropped"] = {"low": min(dropped), "high": max(dropped)}
    return {"rated": DROPPED_AT, "tasks": rows, "summary": summary}


def validity_cost(pools: list[Pool], errors: list[dict], budgets: list[int]) -> dict:
    """Per budget n: the rated pairs each method needs for an interval as narrow as the
    classical fixed-n one at n (h, the mean over replays), its spread held at its value at n:
    the old fixed-n PPI, the same with the new variance floor (the floor's share of the cost),
    and the monitored design (final at h: its critical value c), powered and classical.
    Saved = 1 - needed / n; cost of validity = monitored PPI / fixed-n PPI - 1."""
    per_budget: dict = {}
    for pool, se in zip(pools, errors, strict=True):
        roles = judge_roles(pool)
        for b, n in enumerate(se["at"]):
            if n not in budgets:
                continue
            scale = math.sqrt((1 - n / pool.size) / n)
            rows = {}
            for j, judge in enumerate(pool.judges):
                h = Z * float(se["old_classical"][b, j])
                fixed = ratings_needed(se["old"][b, j] / scale, h, pool=pool.size)
                floored = ratings_needed(se["new"][b, j] / scale, h, pool=pool.size)
                monitored = ratings_needed(
                    se["new"][b, j] / scale, h, pool=pool.size, alpha=DESIGN_ALPHA
                )
                monitored_classical = ratings_needed(
                    se["new_classical"][b, j] / scale, h, pool=pool.size, alpha=DESIGN_ALPHA
                )
                rows[judge] = {
                    "half_width": h,
                    "fixed_ppi": fixed,
                    "fixed_ppi_floored": floored,
                    "monitored_ppi": monitored,
                    "monitored_classical": monitored_classical,
                    "saved_fixed": 1 - fixed / n,
                    "saved_monitored": 1 - monitored / n,
                    "saved_like_for_like": 1 - monitored / monitored_classical,
                    "cost_of_validity": monitored / fixed - 1,
                }
            per_budget.setdefault(n, []).append((roles, rows))
    out: dict = {}
    for n, tasks in per_budget.items():
        rows_keys = [key for key in tasks[0][1][next(iter(tasks[0][1]))] if key != "half_width"]
        out[n] = {}
        for role in ("median", "best", "weak", "all"):
            means = {}
            for key in rows_keys:
                values = [
                    np.mean([rows[j][key] for j in roles[role]])
                    for roles, rows in tasks
                    if roles[role]
                ]
                means[key] = float(np.mean(values)) if values else None
            out[n][role] = means
        out[n]["judges"] = [rows for _, rows in tasks]
    return out


def run_stress(
    name: str, pools: list[Pool], budgets: list[int], replays: int, target: float, seed: int
) -> dict:
    """Every stress setting that runs on one dataset's pools, and the cost of validity."""
    rng = np.random.default_rng([seed, 4, 1 if name == "mmrb2" else 2])
    looked, errors = continuous_looks(pools, budgets, replays, target, rng)
    out = {
        "continuous_looks": looked,
        "dropped_pairs": dropped_pairs(pools, replays, target, rng),
        "validity_cost": validity_cost(pools, errors, budgets),
    }
    if name == "mjbench":
        out["import_order"] = import_order(pools[0], target, looked["at"])
    return out


# ---------------------------------------------------------------- stress output


def _pair(values: dict, fmt) -> str:
    return f"{fmt(values['old']):>9} {fmt(values['new']):>9}"


def _cell(figures: dict) -> str:
    """Coverage mean/worst (mean half-width)."""
    return f"{_mean_worst(figures['coverage'])} ({_pct(figures['half_width'])})"


def _mean_worst(figures: dict, digits: int = 1) -> str:
    return f"{_pct(figures['mean'], digits)}/{_pct(figures['worst'], 0)}"


def print_stress(output: dict, target: float, replays: int) -> None:
    print(
        f"\nStress settings: the judges' figures as leads use them, {replays} random orders "
        f"each.\n  old = the fixed-n 95 % PPI interval (pool_mean, no floor, the whole pool's f); "
        f"new = the product's\n  figure (kept-pairs ratio, variance floor, monitored on the "
        f"project's default target ±{target:.2f})."
        f"\n  Monte Carlo sd of a 5 % rate: {_pct(math.sqrt(0.05 * 0.95 / replays))} pp; "
        f"of a 95 % coverage: the same."
    )
    mjbench = output.get("mjbench_stress", {})
    if "import_order" in mjbench:
        print(
            "\n  1. Import order, MJ-Bench (6 real models, 1,331 pairs in file order: blur first)"
            "\n  rated   file order: models missed     random order: coverage % mean/worst "
            "(mean half-width pp)"
            "\n  /model  old (worst |z|)         new   old                new"
        )
        for n, row in mjbench["import_order"].items():
            file_order, random_order = row["file_order"], row["random_order"]
            cells = "  ".join(_cell(random_order[m]).ljust(17) for m in ("old", "new"))
            print(
                f"  {n:>5}  {file_order['old_missed']} of 6 ({file_order['old_worst_z']:>4.1f})"
                f"      {file_order['new_missed']} of 6   {cells}"
            )
        last = max(mjbench["import_order"])
        hps = mjbench["import_order"][last]["file_order"]["judges"].get("hps_v2.1")
        if hps:
            print(
                f"  hps_v2.1 at {last} in file order: old {hps['old']['estimate']:.3f} "
                f"[{hps['old']['low']:.3f}, {hps['old']['high']:.3f}], new "
                f"{hps['new']['estimate']:.3f} [{hps['new']['low']:.3f}, "
                f"{hps['new']['high']:.3f}], true {hps['truth']:.3f}: the order, not the "
                "estimator, is what the new default fixes"
            )
    print(
        f"\n  2. Continuous looks: after every rating from {MIN_RATED} to {LAST_LOOK}"
        "\n  dataset           some look misses % (mean/worst judge)  covered where the lead "
        "stops %  final by"
        f"\n                    old          new                       old        new        "
        f" {LAST_LOOK}"
    )
    for name, title in (("mmrb2", "MMRB2 simulation"), ("mjbench", "MJ-Bench")):
        looked = output.get(f"{name}_stress", {}).get("continuous_looks")
        if looked is None:
            continue
        summary = looked["summary"]
        missed = summary["any_look_missed"]
        stopped = summary["covered_where_stopped"]
        print(
            f"  {title:16}  {_pct(missed['old']['mean'])}/{_pct(missed['old']['worst'], 0):<6}"
            f" {_pct(missed['new']['mean'])}/{_pct(missed['new']['worst'], 0):<6}"
            f"                {_mean_worst(stopped['old']):>9}  {_mean_worst(stopped['new']):>9}"
            f"  {_pct(summary['final_by_last_look'], 0):>4} %"
        )
    print(
        "  (old stops at the first look whose half-width is within the target; new at the final"
        f" figure,\n  or at look {LAST_LOOK} if it is not final by then)"
    )
    rows = output.get("near_perfect")
    if rows:
        print(
            f"\n  3. Near-perfect judges at {NEAR_PERFECT_RATED} rated pairs"
            "\n  judge                     acc.   coverage % PPI         classical    old   "
            "half-width pp"
            "\n                                   old   new floor      old   new   zero-wide  "
            "old   new"
        )
        for row in rows:
            coverage = row["coverage"]
            cells = " ".join(f"{_pct(coverage[key]):>5}" for key in ("old", "new", "floor_only"))
            print(
                f"  {row['judge']:24} {row['accuracy']:>5.3f}  {cells}    "
                f"{_pct(coverage['old_classical']):>5} {_pct(coverage['new_classical']):>5}  "
                f"{_pct(row['old_zero_width']):>8} %  "
                f"{_pct(row['half_width']['old']):>5} {_pct(row['half_width']['new']):>5}"
            )
        print(
            "  (floor: the new estimate with its variance floor at fixed n, ±1.96 SE, unmonitored)"
        )
    print(
        f"\n  4. Dropped pairs: {DROPPED_SHARE:.0%} of the pool dropped (likelier where the judges"
        f" split), {DROPPED_AT} rated pairs"
        "\n  dataset           dropped %   bias pp mean (worst)   coverage % mean/worst  "
        "half-width pp"
        "\n                                old         new        old       new          old   new"
    )
    for name, title in (("mmrb2", "MMRB2 simulation"), ("mjbench", "MJ-Bench")):
        dropped = output.get(f"{name}_stress", {}).get("dropped_pairs")
        if dropped is None:
            continue
        s = dropped["summary"]
        share = f"{_pct(s['dropped']['low'], 0)}-{_pct(s['dropped']['high'], 0)}"
        biases = "  ".join(
            f"{100 * s[m]['bias_mean']:+.2f} ({100 * s[m]['bias_worst']:+.1f})"
            for m in ("old", "new")
        )
        print(
            f"  {title:16}  {share:>9}   {biases}  {_mean_worst(s['old']['coverage']):>8}  "
            f"{_mean_worst(s['new']['coverage']):>8}     {_pct(s['old']['half_width']):>5} "
            f"{_pct(s['new']['half_width']):>5}"
        )
    print_validity(output)


def print_validity(output: dict) -> None:
    print(
        "\n  The cost of validity: rated pairs needed for an interval as narrow as the classical"
        " fixed-n one\n  at n (saved = 1 - needed / n; the monitored design final at that"
        " width); mean over judges of the role"
        "\n  dataset           rated  classical  saved %: fixed-n PPI | monitored PPI "
        "(median / best / weak)   validity costs  monitored PPI vs"
        "\n                    /task  ±pp                                                       "
        "(median)        monitored classical"
    )
    sentences = []
    for name, title in (("mmrb2", "MMRB2 simulation"), ("mjbench", "MJ-Bench")):
        cost = output.get(f"{name}_stress", {}).get("validity_cost")
        if not cost:
            continue
        for n, row in cost.items():
            half = np.mean([r["half_width"] for task in row["judges"] for r in task.values()])
            saved = " / ".join(
                f"{_pct(row[role]['saved_fixed'], 0):>3} | "
                f"{_pct(row[role]['saved_monitored'], 0):>3}"
                for role in ("median", "best", "weak")
            )
            print(
                f"  {title:16}  {n:>5}  {100 * half:>9.1f}  {saved:<44}  "
                f"{_pct(row['median']['cost_of_validity']):>5} %  "
                f"{_pct(row['median']['saved_like_for_like']):>11} %"
            )
        n = 100 if 100 in cost else next(iter(cost))
        median = cost[n]["median"]
        sentences.append(
            f"{title}, {n} rated pairs, median judge: validity costs "
            f"{_pct(median['cost_of_validity'], 0)} % more pairs than the fixed-n PPI figure "
            f"({median['monitored_ppi']:.0f} against {median['fixed_ppi']:.0f}; the variance "
            f"floor alone: {median['fixed_ppi_floored']:.0f}); PPI with the "
            f"monitored design {_saves(median['saved_monitored'])} against classical fixed-n "
            f"({n} pairs) and {_saves(median['saved_like_for_like'])} against classical "
            f"monitored the same way ({median['monitored_classical']:.0f})."
        )
    for sentence in sentences:
        print(f"  {sentence}")


def _saves(share: float) -> str:
    return f"saves {_pct(share, 0)} %" if share >= 0 else f"costs {_pct(-share, 0)} % more"


def run_dataset(pools: list[Pool], budgets: list[int], replays: int, rng) -> dict:
    replayed = [replay_pool(pool, budgets, replays, rng) for pool in pools]
    return {
        "replayed": replayed,
        "summary": summarise(pools, replayed, budgets),
        "replays": replays,
    }


def as_json(pools: list[Pool], result: dict) -> dict:
    return {
        "tasks": {
            pool.name: {
                "pairs": pool.size,
                "consensus_accuracy": pool.consensus,
                "judges": {
                    judge: {
                        "accuracy": float(pool.y[j].mean()),
                        "skill": pool.skills[j],
                        "weaker_than_consensus": bool(pool.y[j].mean() < pool.consensus),
                        "budgets": {str(n): b["judges"][judge] for n, b in done.items()},
                    }
                    for j, judge in enumerate(pool.judges)
                },
                "roles": judge_roles(pool),
            }
            for pool, done in zip(pools, result["replayed"], strict=True)
        },
        "summary": {str(n): entry for n, entry in result["summary"].items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        prog=f"python -m {__spec__.name}", description=__doc__.splitlines()[0]
    )
    parser.add_argument("--replays", type=int, default=1000, help="replays per budget (1000)")
    parser.add_argument("--budgets", type=int, nargs="+", default=DEFAULT_BUDGETS, metavar="N",
                        help="rated pairs per task (default: 50 100 200 400)")  # fmt: skip
    parser.add_argument("--seed", type=int, default=0, help="seed of every Generator (0)")
    parser.add_argument("--only", choices=["mmrb2", "mjbench"], help="one of the two replays")
    parser.add_argument("--difficulty", type=float, default=DIFFICULTY_SD,
                        help=f"sd of the hidden difficulty (default {DIFFICULTY_SD})")  # fmt: skip
    parser.add_argument("--sweep", type=float, nargs="*", default=SWEEP, metavar="SD",
                        help="hidden-difficulty sds replayed at budget 100 (default: 1 2 3 4; "
                        "none: no sweep)")  # fmt: skip
    parser.add_argument("--stress-replays", type=int, default=STRESS_REPLAYS, metavar="N",
                        help=f"random orders per stress setting (default {STRESS_REPLAYS}; 0: "
                        "no stress settings, no cost of validity)")  # fmt: skip
    parser.add_argument("--target", type=float, default=PRODUCT_TARGET,
                        help="target half-width the new figures are monitored on (default "
                        f"{PRODUCT_TARGET}, the project's default)")  # fmt: skip
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if min(args.budgets) < 2 or args.replays < 1 or args.stress_replays < 0:
        parser.error("budgets need at least 2 rated pairs and --replays at least 1")
    if not 0 < args.target <= 0.5:
        parser.error("--target must lie in (0, 0.5]")
    budgets = sorted(set(args.budgets))
    started = time.perf_counter()
    output: dict = {"replays": args.replays, "budgets": budgets, "seed": args.seed}
    shown = []
    if args.only in (None, "mmrb2"):
        if not MMRB2.is_dir():
            print(f"The MMRB2 files are not at {MMRB2}; nothing to measure.", file=sys.stderr)
            return 1
        rng = np.random.default_rng([args.seed, 1])
        pools = simulate_mmrb2(rng, args.difficulty)
        result = run_dataset(pools, budgets, args.replays, rng)
        output["mmrb2"] = {**as_json(pools, result), "difficulty_sd": args.difficulty}
        shown.append(("mmrb2", pools, result))
        if args.stress_replays:
            output["mmrb2_stress"] = run_stress(
                "mmrb2", pools, budgets, args.stress_replays, args.target, args.seed
            )
        if args.sweep:
            n = sweep_budget(budgets)
            output["mmrb2_sweep"] = sweep(args.sweep, n, args.replays, args.seed)
    if args.only in (None, "mjbench"):
        if not MJBENCH.is_dir():
            print(f"The MJ-Bench files are not at {MJBENCH}; nothing to measure.", file=sys.stderr)
            return 1
        rng = np.random.default_rng([args.seed, 2])
        pools = [mjbench_pool()]
        result = run_dataset(pools, budgets, args.replays, rng)
        output["mjbench"] = {**as_json(pools, result), "machinery_check": True}
        shown.append(("mjbench", pools, result))
        if args.stress_replays:
            output["mjbench_stress"] = run_stress(
                "mjbench", pools, budgets, args.stress_replays, args.target, args.seed
            )
    if args.stress_replays:
        blur = mjbench_pool(["blur"]) if args.only in (None, "mjbench") else None
        rng = np.random.default_rng([args.seed, 5])
        output["near_perfect"] = near_perfect(args.stress_replays, args.target, rng, blur)
        output["stress"] = {"replays": args.stress_replays, "target": args.target}
    output["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(output))
        return 0
    for name, pools, result in shown:
        print_dataset(*_titles(name, pools, args), pools, result)
        if name == "mmrb2" and args.sweep:
            print_sweep(output["mmrb2_sweep"], len(SKILLS), args.replays)
    if args.stress_replays:
        print_stress(output, args.target, args.stress_replays)
    print(f"\n{output['seconds']} s")
    return 0


def _titles(name: str, pools: list[Pool], args) -> tuple[str, list[str]]:
    if name == "mmrb2":
        return (
            f"MMRB2 simulation: {len(pools)} tasks x 1,000 real pairs (real expert labels and "
            f"agreement), {len(SKILLS)} simulated judges of skill "
            f"{SKILLS[0]:.2f}-{SKILLS[-1]:.2f}, "
            f"forward + reverse; {args.replays} replays per budget; seed {args.seed}; hidden "
            f"difficulty sd {args.difficulty}",
            ["the headline figures"],
        )
    return (
        f"MJ-Bench: 6 scoring models' real outputs on {pools[0].size} quality and safety pairs "
        f"(one pool), one trial each; {args.replays} replays per budget; seed {args.seed}",
        [
            "MACHINERY CHECK ONLY: every pair's label is image 0 by construction of these subsets,",
            "so a judge's accuracy is its share of image-0 picks; not a headline figure.",
        ],
    )


if __name__ == "__main__":
    sys.exit(main())
