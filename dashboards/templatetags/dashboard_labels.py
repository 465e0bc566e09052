"""Labels of the dashboards' keys, in the page's language."""

from django import template
from django.utils.translation import pgettext

from metrics.annotator_flags import FLAG_LABELS

register = template.Library()


@register.filter
def flag_label(name: str) -> str:
    """An annotator flag's name as a page shows it (the name itself where none is known)."""
    return FLAG_LABELS.get(name, name)


@register.filter
def side_label(value):
    """A side or decision kept as data ("A", "B", "tie", "kept A", "dropped") as a page
    shows it: the sides' letters stay, the words are translated."""
    if value == "tie":
        return pgettext("side", "tie")
    if value == "dropped":
        return pgettext("decision", "dropped")
    if isinstance(value, str) and value.startswith("kept "):
        return pgettext("decision", "kept %(side)s") % {"side": value.removeprefix("kept ")}
    return value
