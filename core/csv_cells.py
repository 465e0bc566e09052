"""CSV downloads' cells and streams, for every app that offers one (the dashboards' tables,
the pair browser, the audit trail). A cell a spreadsheet would run as a formula (text starting
with =, +, -, @, tab or CR, unless it is a number) gets a leading quote, so it shows as it is."""

import csv
from collections.abc import Iterable, Iterator

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


class _Echo:
    """A file that hands back what is written: csv.writer then returns each line."""

    def write(self, value: str) -> str:
        return value


def csv_stream(header: list[str], rows: Iterable[Iterable]) -> Iterator[str]:
    """The header, then each row with its cells made safe, a line at a time (for a
    StreamingHttpResponse: memory stays one row, whatever the table's length)."""
    writer = csv.writer(_Echo())
    yield writer.writerow(header)
    for row in rows:
        yield writer.writerow([csv_safe(cell) for cell in row])
