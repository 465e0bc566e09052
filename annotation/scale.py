"""The rules of the rating scale, in one place and free of Django (metrics use them too).

Scores are stored canonically: on a K-point scale, above the centre means response A is
better (docs/architecture.md §5.1). The form shows the pair Left/Right, with A on the right
when the assignment is `swapped`; a judge sees A first in the forward order and B first in
the reverse one.
"""

Side = str  # "A", "B" or "" (at the centre)

OTHER_SIDE = {"A": "B", "B": "A"}


def center(scale: int) -> float:
    return (scale + 1) / 2


def side_of(score: float, center: float) -> Side:
    if score > center:
        return "A"
    if score < center:
        return "B"
    return ""


def to_canonical(form_score: int, scale: int, swapped: bool) -> int:
    """Left/Right form score → canonical score; the mapping is its own inverse."""
    return form_score if swapped else scale + 1 - form_score


to_form = to_canonical  # canonical → Left/Right: the same mapping


def canonical_side(letter: str, reverse: bool) -> str:
    """A judge's A/B (first/second shown) as the canonical side; anything else unchanged."""
    return OTHER_SIDE.get(letter, letter) if reverse else letter
