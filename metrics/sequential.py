"""Intervals that stay right however often the lead looks (docs/architecture.md §6.6).

A lead watches the judges page after every rating and stops when it says "target met" or "A is
better than B". A 95 % interval recomputed at every look misses at some look far more often
than 5 % (a third of the time from 50 to 400 ratings). The design here is a planned amount of
information with continuous interim monitoring:

- The plan is set by the project's target half-width h alone, never by the data: a figure is
  *final* once c·SE ≤ h, its planned information (1/SE²) being I* = (c/h)².
- Before that, at information fraction t = I/I* = (h / (c·SE))², the interval is
  estimate ± c/√t · SE = estimate ± c²·SE²/h (but see the cap below). On the scale of the
  score process (estimate error × information) this boundary is the constant c: the
  O'Brien–Fleming shape of α-spending, monitored continuously.
- Early on, c/√t grows without bound (an interval of ±0.8 at 50 rated pairs for a target of
  ±0.03 says nothing), so the interim critical value is capped at CAP = 4.5. The cap spends a
  little error of its own: the standardised error W(t)/√t is, in log t, a stationary
  Ornstein–Uhlenbeck process, which crosses ±4.5 with probability about
  2·(1 + S·u²/2)·(1 − Φ(u)) over S units of log t (Pickands), under 0.001 for S ≤ 13 (the
  first interval at less than a millionth of the planned information: no real target).
- c solves P(sup_{0≤t≤1} |W(t)| ≥ c) = α − 0.001 for a Brownian motion W: the chance that any
  interval shown up to the final one misses is at most α, however many looks (every rating)
  and whenever the lead stops. The error left to each interim look is tiny, so the final
  critical value is c = 2.2492 at α = 0.05: the final interval is 1.148 × the fixed-n width,
  where spending δ·6/(π²k²) at the k-th look costs 1.65× by the fifth look.
- Once final, the figure no longer moves: it is computed on the rated pairs counted up to the
  first moment it became final (ratings after it serve the consensus dataset, not this
  decision), so later looks cannot undo the guarantee.

Why a Brownian motion: the prediction-powered estimate on a simple random sample without
replacement of a finite pool has standardised error W(τ)/√τ with τ = n/(M − n) (the finite
pool's sum is a Brownian bridge), and information 1/SE² is proportional to τ; with the
variance estimated along the way this is information-based monitoring (Lan & DeMets 1983;
Mehta & Tsiatis 2001). Looks are discrete (one per rating), which only lowers the error.

References: K. K. G. Lan, D. L. DeMets. Discrete sequential boundaries for clinical trials.
Biometrika 70 (1983). P. C. O'Brien, T. R. Fleming. A multiple testing procedure for clinical
trials. Biometrics 35 (1979). C. R. Mehta, A. A. Tsiatis. Flexible sample size considerations
using information-based interim monitoring. Drug Inf. J. 35 (2001).
"""

import functools
import math


def _inside_probability(c: float) -> float:
    """P(sup_{0≤t≤1} |W(t)| < c) for a standard Brownian motion (the classical series)."""
    total = 0.0
    for k in range(100):
        odd = 2 * k + 1
        term = (-1) ** k / odd * math.exp(-(odd**2) * math.pi**2 / (8 * c * c))
        total += term
        if abs(term) < 1e-17:
            break
    return 4 / math.pi * total


CAP = 4.5  # the largest interim critical value
CAP_ALPHA = 0.001  # the error the cap may spend (the module's docstring)


@functools.lru_cache(maxsize=16)
def critical_value(alpha: float = 0.05) -> float:
    """c with P(sup_{0≤t≤1} |W(t)| ≥ c) = alpha − CAP_ALPHA (2.2492 at 0.05), by bisection."""
    if not CAP_ALPHA < alpha < 1.0:
        raise ValueError(f"alpha must lie strictly between {CAP_ALPHA} and 1")
    low, high = 0.5, 10.0  # inside-probability rises with c from near 0 to 1
    while high - low > 1e-12:
        middle = (low + high) / 2
        if _inside_probability(middle) < 1 - (alpha - CAP_ALPHA):
            low = middle
        else:
            high = middle
    return high


def is_final(std_error: float, target: float, alpha: float = 0.05) -> bool:
    """Whether a figure with this standard error has reached its planned information."""
    return critical_value(alpha) * std_error <= target


def level(std_error: float, target: float, alpha: float = 0.05) -> float:
    """The monitored interval's critical value: c·(c·SE/h) before the planned information,
    at most CAP; c at it (the module's docstring)."""
    if not math.isfinite(target) or target <= 0:
        raise ValueError("the target half-width must be a finite number > 0")
    c = critical_value(alpha)
    return max(c, min(c * c * std_error / target, CAP))


def half_width(std_error: float, target: float, alpha: float = 0.05) -> float:
    """The monitored interval's half-width: level × SE."""
    return level(std_error, target, alpha) * std_error
