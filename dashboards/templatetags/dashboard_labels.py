"""Labels of the dashboards' keys, in the page's language."""

from django import template

from metrics.annotator_flags import FLAG_LABELS

register = template.Library()


@register.filter
def flag_label(name: str) -> str:
    """An annotator flag's name as a page shows it (the name itself where none is known)."""
    return FLAG_LABELS.get(name, name)
