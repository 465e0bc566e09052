"""Dashboard tables as CSV downloads (`?format=csv` on a page). Cells that a spreadsheet would
run as a formula are prefixed with a quote (core/csv_cells.py)."""

import csv
from collections.abc import Iterable

from django.http import HttpRequest, HttpResponse

from core.csv_cells import csv_safe


def wants_csv(request: HttpRequest) -> bool:
    return bool(request.GET.get("format") == "csv")


def csv_response(
    filename: str, header: list[str], rows: Iterable[Iterable[object]]
) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_safe(cell) for cell in row])
    return response
