"""A CSV cell a spreadsheet shows as it is: text starting like a formula (=, +, -, @, tab, CR)
gets a leading quote. (dashboards/csv.py has the same rule; the audit app may not import a
sibling of its layer.)"""

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def csv_safe(value) -> str:
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True
