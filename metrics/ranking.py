"""Generator ranking (docs/architecture.md §6.4): win rate of each model over kept pairs, plus
Bradley–Terry scores with bootstrap intervals.

A game row is (generator_a, generator_b, label): label "A" means generator_a's response won.
Rows with another label, or with the same generator on both sides, are not games and are left
out everywhere.
"""

from collections import defaultdict
from collections.abc import Hashable, Iterable

import numpy as np

from metrics.bootstrap import Interval, percentile_interval, resample_indices

GameRow = tuple[Hashable, Hashable, str]


def games(rows: Iterable[GameRow]) -> list[tuple[Hashable, Hashable]]:
    """(winner, loser) for each row that is a game."""
    result = []
    for generator_a, generator_b, label in rows:
        if generator_a == generator_b or label not in ("A", "B"):
            continue
        result.append((generator_a, generator_b) if label == "A" else (generator_b, generator_a))
    return result


def win_rates(rows: Iterable[GameRow]) -> dict[Hashable, tuple[int, int, float]]:
    """{generator: (wins, games, wins / games)}, generators sorted by name."""
    wins: dict[Hashable, int] = defaultdict(int)
    played: dict[Hashable, int] = defaultdict(int)
    for winner, loser in games(rows):
        wins[winner] += 1
        played[winner] += 1
        played[loser] += 1
    return {g: (wins[g], played[g], wins[g] / played[g]) for g in sorted(played, key=str)}


def _fit(wins: np.ndarray, prior: float, iterations: int, tol: float) -> np.ndarray:
    """Log-strengths, centred to mean 0, from wins[i, j] = games i won against j.

    MM algorithm (Hunter 2004): p_i <- W_i / sum_j n_ij / (p_i + p_j), rescaled each step to
    geometric mean 1. The prior adds, for every generator, `prior` virtual wins and `prior`
    virtual losses against a reference player, which keeps undefeated or winless generators
    finite and connects every generator. The reference is fitted like the others (fitting it
    in turn makes MM converge in tens of steps instead of thousands when pinned) and dropped.
    """
    size = len(wins)
    if prior > 0:
        augmented = np.zeros((size + 1, size + 1))
        augmented[:size, :size] = wins
        augmented[:size, size] = prior
        augmented[size, :size] = prior
        wins = augmented
    total_wins = wins.sum(axis=1)
    if np.any(total_wins == 0) or np.any(wins.sum(axis=0) == 0):
        raise ValueError("a generator without wins or without losses needs prior > 0")
    played = wins + wins.T
    log_strength = np.zeros(len(wins))
    for _ in range(iterations):
        strength = np.exp(log_strength)
        pairwise = played / (strength[:, None] + strength[None, :])
        updated = np.log(total_wins / pairwise.sum(axis=1))
        updated -= updated.mean()
        change = np.max(np.abs(updated - log_strength))
        log_strength = updated
        if change < tol:
            break
    scores = log_strength[:size]
    centred: np.ndarray = scores - scores.mean()  # typed here: numpy's stubs say Any
    return centred


def _win_matrix(coded: np.ndarray, size: int) -> np.ndarray:
    """wins[i, j] from an (n, 2) integer array of (winner, loser) indices."""
    matrix = np.zeros((size, size))
    np.add.at(matrix, (coded[:, 0], coded[:, 1]), 1)
    return matrix


def bradley_terry(
    rows: Iterable[GameRow],
    *,
    prior: float = 0.5,
    iterations: int = 10_000,
    tol: float = 1e-10,
) -> dict[Hashable, float]:
    """{generator: score}: Bradley–Terry log-strengths centred to mean 0 (a difference d means
    odds e^d of winning), generators sorted by name. `prior` is the weight of the regularising
    virtual games (see _fit); prior=0 is the plain maximum likelihood and raises ValueError when
    a generator has no win or no loss (its score would be infinite)."""
    played = games(rows)
    names = sorted({g for game in played for g in game}, key=str)
    if not names:
        return {}
    index = {name: i for i, name in enumerate(names)}
    coded = np.array([(index[w], index[v]) for w, v in played])
    matrix = _win_matrix(coded, len(names))
    scores = _fit(matrix, prior, iterations, tol)
    return {name: float(score) for name, score in zip(names, scores, strict=True)}


def _fit_newton(wins: np.ndarray, prior: float, tol: float = 1e-10) -> np.ndarray:
    """Log-strengths for a batch of win matrices (B × G × G) at once, with the same model as
    _fit (prior > 0: virtual games against a reference player, whose strength is the gauge).
    Newton's method on the concave log-likelihood: a handful of linear solves instead of
    hundreds of MM steps per matrix. Scores are not centred here."""
    batch, size, _ = wins.shape
    augmented = np.zeros((batch, size + 1, size + 1))
    augmented[:, :size, :size] = wins
    augmented[:, :size, size] = prior
    augmented[:, size, :size] = prior
    played = augmented + augmented.transpose(0, 2, 1)
    theta = np.zeros((batch, size + 1))
    for _ in range(100):
        probability = 1 / (1 + np.exp(theta[:, None, :] - theta[:, :, None]))
        gradient = (augmented - played * probability).sum(axis=2)[:, :size]
        weight = played * probability * (1 - probability)
        hessian = weight[:, :size, :size].copy()
        diagonal = np.arange(size)
        hessian[:, diagonal, diagonal] -= weight.sum(axis=2)[:, :size]
        step = np.linalg.solve(hessian, -gradient[..., None])[..., 0]
        theta[:, :size] += np.clip(step, -5, 5)
        if np.max(np.abs(step)) < tol:
            break
    return theta[:, :size]


def _batched_win_matrices(coded: np.ndarray, block: np.ndarray, size: int) -> np.ndarray:
    """Win matrices of a block of resamples (R × n game indices) with one bincount."""
    count = len(block)
    winners, losers = coded[block, 0], coded[block, 1]
    flat = (np.arange(count)[:, None] * size + winners) * size + losers
    return np.bincount(flat.ravel(), minlength=count * size * size).reshape(count, size, size)


def bradley_terry_intervals(
    rows: Iterable[GameRow],
    resamples: int = 200,
    seed: int = 0,
    *,
    level: float = 0.95,
    prior: float = 0.5,
    iterations: int = 10_000,
    tol: float = 1e-8,
) -> dict[Hashable, Interval | None]:
    """{generator: (low, high) | None}: percentile bootstrap intervals of the Bradley–Terry
    scores, resampling games with replacement (Generator(PCG64(seed)): reproducible).

    Scores are centred within each resample over the generators present in it; an absent
    generator is skipped there; with prior=0, resamples where the fit is undefined are skipped.
    None for a generator when no resample scored it, and for every generator when there are
    fewer than 2 games. With prior > 0 all resamples are fitted together (Newton)."""
    if not 0.0 < level < 1.0:
        raise ValueError("level must lie strictly between 0 and 1")
    played = games(rows)
    names = sorted({g for game in played for g in game}, key=str)
    if len(played) < 2:
        return dict.fromkeys(names)
    index = {name: i for i, name in enumerate(names)}
    coded = np.array([(index[w], index[v]) for w, v in played])
    samples: list[list[float]] = [[] for _ in names]
    for block in resample_indices(len(coded), resamples, seed):
        if prior > 0:
            matrices = _batched_win_matrices(coded, block, len(names))
            scores = _fit_newton(matrices, prior, tol)
            present = (matrices.sum(axis=2) + matrices.sum(axis=1)) > 0
            centred = scores - (scores * present).sum(axis=1, keepdims=True) / present.sum(
                axis=1, keepdims=True
            )
            for generator in range(len(names)):
                samples[generator].extend(centred[present[:, generator], generator].tolist())
            continue
        for row in block:
            resample = coded[row]
            present_ids = np.unique(resample)
            local = np.searchsorted(present_ids, resample)
            try:
                fitted = _fit(_win_matrix(local, len(present_ids)), prior, iterations, tol)
            except ValueError:
                continue
            for position, generator in enumerate(present_ids):
                samples[generator].append(float(fitted[position]))
    return {
        name: percentile_interval(samples[i], level) if samples[i] else None
        for i, name in enumerate(names)
    }
