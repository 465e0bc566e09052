"""Quality-control figures per annotator (docs/architecture.md §6.5): gold accuracy
with a Wilson interval, and the speed and pattern flags with their evidence. Pure functions
over plain rows.

A rating row here is (shown_score, active_seconds) in the order the annotator submitted:
`shown_score` is the key the annotator pressed on the Left/Right form (1 = Left much better),
so runs and left preference are read as the annotator saw the pair.
"""

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

# Flag thresholds. Each is chosen so that an honest annotator on randomised sides is very
# unlikely to meet it by chance (a run of 15 same sides in 100 fair coin flips: ~0.2 %).
FAST_SHARE = 0.2  # flagged when at least this share of ratings is under the task's floor
FAST_MIN = 3  # ...and at least this many of them
SAME_SCORE_RUN = 10  # the same key pressed this many times in a row
SAME_SIDE_RUN = 15  # the same side (Left or Right) preferred this many times in a row
LEFT_BIAS_P = 0.01  # two-sided binomial test of Left against Right preferences
LEFT_BIAS_MIN = 20  # decisive ratings needed before the test is read


def gettext_noop(message: str) -> str:
    """Marks an evidence sentence for `makemessages`; the pages translate it where they show it
    (dashboards/templatetags/dashboard_labels.py::evidence_text): this module stays plain
    Python (an import contract)."""
    return message


class Evidence(str):
    """A flag's evidence: reads as its English sentence (the report, CSV, API) and keeps the
    sentence's msgid and values, so a page can say it in its own language. Stored with the
    precomputed figures (pickled), which every language shares."""

    message: str
    params: dict[str, object]

    def __new__(cls, message: str, params: dict[str, object]) -> "Evidence":
        text = super().__new__(cls, message % params)
        text.message, text.params = message, params
        return text

    def __getnewargs__(self) -> tuple[str, dict[str, object]]:  # type: ignore[override]
        return self.message, self.params


@dataclass
class Flag:
    name: str  # fast | same_score | same_side | left_bias
    evidence: str


@dataclass
class AnnotatorFlags:
    ratings: int
    flags: list[Flag] = field(default_factory=list)

    @property
    def names(self) -> list[str]:
        return [flag.name for flag in self.flags]


def wilson_interval(correct: int, n: int, z: float = 1.959964) -> tuple[float, float] | None:
    """Wilson score interval of a proportion (95 % by default); None without answers. Sound
    at the small n gold checks have, where the normal approximation leaves [0, 1]."""
    if n == 0:
        return None
    p = correct / n
    denominator = 1 + z * z / n
    middle = (p + z * z / (2 * n)) / denominator
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / denominator
    return max(0.0, middle - half), min(1.0, middle + half)


def binomial_two_sided_p(k: int, n: int) -> float:
    """Exact two-sided p-value of k successes in n fair trials (the doubled smaller tail)."""
    if n == 0:
        return 1.0
    tail: float = sum(math.comb(n, i) for i in range(0, min(k, n - k) + 1)) / 2**n
    return min(1.0, 2 * tail)


def longest_run(values: Sequence[object]) -> tuple[int, object]:
    """The longest run of equal consecutive values (None values break runs) and its value."""
    best, best_value, run, previous = 0, None, 0, object()
    for value in values:
        run = run + 1 if value is not None and value == previous else int(value is not None)
        previous = value
        if run > best:
            best, best_value = run, value
    return best, best_value


def annotator_flags(
    rows: Sequence[tuple[int, float | None]], scale: int, floor_seconds: float
) -> AnnotatorFlags:
    """The flags one annotator's ratings in a task earn, each with its evidence."""
    result = AnnotatorFlags(ratings=len(rows))
    if not rows:
        return result
    center = (scale + 1) / 2
    timed = [seconds for _score, seconds in rows if seconds is not None]
    fast = [seconds for seconds in timed if seconds < floor_seconds]
    if len(fast) >= FAST_MIN and len(fast) >= FAST_SHARE * len(rows):
        median = sorted(timed)[len(timed) // 2]
        result.flags.append(
            Flag(
                "fast",
                Evidence(
                    gettext_noop(
                        "%(fast)s of %(count)s ratings under %(floor)s s of active time "
                        "(median %(median)s s)"
                    ),
                    {
                        "fast": len(fast),
                        "count": len(rows),
                        "floor": f"{floor_seconds:g}",
                        "median": f"{median:.1f}",
                    },
                ),
            )
        )
    scores = [score for score, _seconds in rows]
    run, value = longest_run(scores)
    if run >= SAME_SCORE_RUN:
        result.flags.append(
            Flag(
                "same_score",
                Evidence(
                    gettext_noop("score %(score)s given %(run)s times in a row"),
                    {"score": value, "run": run},
                ),
            )
        )
    sides = ["Left" if s < center else "Right" if s > center else None for s in scores]
    run, value = longest_run(sides)
    if run >= SAME_SIDE_RUN:
        result.flags.append(
            Flag(
                "same_side",
                Evidence(
                    gettext_noop("%(side)s preferred %(run)s times in a row"),
                    {"side": value, "run": run},
                ),
            )
        )
    left, decisive = sides.count("Left"), sum(side is not None for side in sides)
    if decisive >= LEFT_BIAS_MIN:
        p = binomial_two_sided_p(left, decisive)
        if p < LEFT_BIAS_P and left * 2 > decisive:
            result.flags.append(
                Flag(
                    "left_bias",
                    Evidence(
                        gettext_noop("Left preferred in %(left)s of %(count)s (p = %(p)s)"),
                        {"left": left, "count": decisive, "p": f"{p:.2g}"},
                    ),
                )
            )
    return result
