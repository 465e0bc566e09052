"""Label efficiency of prediction-powered judge accuracy (issue 27): how many expert ratings
PPI++ saves when estimating each judge's accuracy against the experts, replayed on real data.

usage: python -m bench.label_efficiency [--replays 1000] [--budgets 50 100 200 400] [--seed 0]
                                        [--only mmrb2|mjbench] [--difficulty 3.0]
                                        [--sweep 1 2 3 4] [--json]

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
Targets (issue 27): coverage >= 93 % from 100 rated pairs; >= 15 % fewer ratings at equal width
for the median judge on the MMRB2 simulation at 100 rated pairs per task; never worse than
classical. Needs ../shared/datasets beside the checkout.
"""

import argparse
import json
import math
import sys
import time
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
    simulate_mmrb2,
)
from metrics.judge_ppi import MIN_RATED
from metrics.ppi import active_mean, classical_mean, pool_mean, ratings_needed

DEFAULT_BUDGETS = [50, 100, 200, 400]
ACTIVE_FROM = 100  # rated pairs: an active interval is shown only from here (issue 27)
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
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args()
    if min(args.budgets) < 2 or args.replays < 1:
        parser.error("budgets need at least 2 rated pairs and --replays at least 1")
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
    output["seconds"] = round(time.perf_counter() - started, 1)
    if args.json:
        print(json.dumps(output))
        return 0
    for name, pools, result in shown:
        print_dataset(*_titles(name, pools, args), pools, result)
        if name == "mmrb2" and args.sweep:
            print_sweep(output["mmrb2_sweep"], len(SKILLS), args.replays)
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
            ["the headline of issue 27"],
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
