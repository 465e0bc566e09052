"""Labels of the dashboards' keys, in the page's language."""

from typing import TYPE_CHECKING

from django import template
from django.utils.translation import gettext, pgettext, pgettext_lazy

from metrics.annotator_flags import Evidence

if TYPE_CHECKING:  # the stubs' type of a lazy translation; not installed at run time
    from django_stubs_ext import StrOrPromise

register = template.Library()

# How each flag's name reads on a page (the names themselves are keys: CSV, API, tests).
FLAG_LABELS = {
    "fast": pgettext_lazy("annotator flag", "fast"),
    "same_score": pgettext_lazy("annotator flag", "same_score"),
    "same_side": pgettext_lazy("annotator flag", "same_side"),
    "left_bias": pgettext_lazy("annotator flag", "left_bias"),
}


@register.filter
def flag_label(name: str) -> "StrOrPromise":
    """An annotator flag's name as a page shows it (the name itself where none is known)."""
    return FLAG_LABELS.get(name, name)


@register.filter
def side_label(value: object) -> object:
    """A side or decision kept as data ("A", "B", "tie", "kept A", "dropped") as a page
    shows it: the sides' letters stay, the words are translated."""
    if value == "tie":
        return pgettext("side", "tie")
    if value == "dropped":
        return pgettext("decision", "dropped")
    if isinstance(value, str) and value.startswith("kept "):
        return pgettext("decision", "kept %(side)s") % {"side": value.removeprefix("kept ")}
    return value


@register.filter
def evidence_text(evidence: object) -> object:
    """A flag's evidence (metrics.annotator_flags.Evidence) in the page's language; any other
    text as it is."""
    if not isinstance(evidence, Evidence):
        return evidence
    params = dict(evidence.params)
    side = params.get("side")
    if side in ("Left", "Right"):
        params["side"] = pgettext("side", str(side))
    return gettext(evidence.message) % params
