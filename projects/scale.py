"""The rules of the rating scale, in one place and free of Django (metrics use them too).

Scores are stored canonically: on a K-point scale, above the centre means response A is
better (docs/architecture.md §5.1). The form shows the pair Left/Right, with A on the right
when the assignment is `swapped`; a judge sees A first in the forward order and B first in
the reverse one.
"""

Side = str  # "A", "B" or "" (at the centre)


def gettext_noop(message: str) -> str:
    """Marks the scale's words for `makemessages`; the pages translate them where they show
    them (this module stays plain Python)."""
    return message


OTHER_SIDE = {"A": "B", "B": "A"}


def center(scale: int) -> float:
    return (scale + 1) / 2


def side_of(score: float, center: float) -> Side:
    if score > center:
        return "A"
    if score < center:
        return "B"
    return ""


def answers_expected_side(score: float, scale: int, expected: Side) -> bool:
    """A rating's answer to a gold check: right when it names the expected side; a rating at
    the centre (a tie) names none and is wrong."""
    return side_of(score, center(scale)) == expected


def to_canonical(form_score: int, scale: int, swapped: bool) -> int:
    """Left/Right form score → canonical score; the mapping is its own inverse."""
    return form_score if swapped else scale + 1 - form_score


to_form = to_canonical  # canonical → Left/Right: the same mapping


def canonical_side(letter: str, reverse: bool) -> str:
    """A judge's A/B (first/second shown) as the canonical side; anything else unchanged."""
    return OTHER_SIDE.get(letter, letter) if reverse else letter


_SEVEN_POINT_LABELS = [
    gettext_noop("Left much better"),
    gettext_noop("Left better"),
    gettext_noop("Left slightly better"),
    gettext_noop("About the same"),
    gettext_noop("Right slightly better"),
    gettext_noop("Right better"),
    gettext_noop("Right much better"),
]


def scale_labels(scale: int) -> list[tuple[int, str]]:
    """(value, label) from 1 = Left much better to K = Right much better."""
    if scale == 7:
        return list(enumerate(_SEVEN_POINT_LABELS, start=1))
    middle = center(scale)
    labels = []
    for value in range(1, scale + 1):
        if value == middle:
            labels.append((value, "About the same"))
        elif value == 1:
            labels.append((value, "Left much better"))
        elif value == scale:
            labels.append((value, "Right much better"))
        else:
            labels.append((value, "Left better" if value < middle else "Right better"))
    return labels


def scale_short_labels(scale: int) -> list[str]:
    """A compact label per point, for narrow screens: L+++ … = … R+++ (one + per step from
    the centre), so the scale keeps its left-to-right meaning in one row."""
    middle = center(scale)
    short = []
    for value in range(1, scale + 1):
        steps = int(abs(value - middle) + 0.5)
        if value == middle:
            short.append("=")
        else:
            short.append(("L" if value < middle else "R") + "+" * max(steps, 1))
    return short
