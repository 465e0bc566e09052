"""Dashboard tables as CSV downloads (`?format=csv` on a page). Cells that a spreadsheet would
run as a formula (starting with =, +, -, @, tab or CR) are prefixed with a quote."""

import csv

from django.http import HttpResponse

_FORMULA_STARTS = ("=", "+", "-", "@", "\t", "\r")


def _safe(value) -> str:
    text = "" if value is None else str(value)
    if text.startswith(_FORMULA_STARTS) and not _is_number(text):
        return "'" + text
    return text


def csv_safe(value) -> str:
    """A cell as text a spreadsheet shows as it is (for writers of their own, streamed)."""
    return _safe(value)


def _is_number(text: str) -> bool:
    try:
        float(text)
    except ValueError:
        return False
    return True


def wants_csv(request) -> bool:
    return request.GET.get("format") == "csv"


def csv_response(filename: str, header: list[str], rows) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    for row in rows:
        writer.writerow([_safe(cell) for cell in row])
    return response
