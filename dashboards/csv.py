"""Dashboard tables as CSV downloads (`?format=csv` on a page). Cells that a spreadsheet would
run as a formula are prefixed with a quote (core/csv_cells.py)."""

import csv

from django.http import HttpResponse

from core.csv_cells import csv_safe


def wants_csv(request) -> bool:
    return request.GET.get("format") == "csv"


def csv_response(filename: str, header: list[str], rows) -> HttpResponse:
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="{filename}"'
    writer = csv.writer(response)
    writer.writerow(header)
    for row in rows:
        writer.writerow([csv_safe(cell) for cell in row])
    return response
