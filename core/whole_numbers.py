"""Whole numbers typed by a visitor (page numbers, ids in a query string or a form), parsed
strictly in one place: ASCII digits only, no sign, no spaces, bounded. `str.isdigit()` alone
accepts "²" and other Unicode digits that `int()` then refuses, and an unbounded number
overflows the database's 64-bit integers; both used to be 500s."""

MAX_DATABASE_ID = 2**63 - 1  # the largest integer PostgreSQL's and SQLite's ids hold


def whole_number(value: object, *, maximum: int = MAX_DATABASE_ID) -> int | None:
    """The number `value` spells (0 to `maximum`), or None for anything else."""
    text = value if isinstance(value, str) else str(value)
    if not (0 < len(text) <= len(str(maximum)) and text.isascii() and text.isdigit()):
        return None
    number = int(text)
    return number if number <= maximum else None
