"""An export reads a batch of pairs with a fixed number of queries: the count does not grow
with the number of pairs (nor with their ratings, aspects, verdicts and images)."""

import pytest
from django.db import connection
from django.test.utils import CaptureQueriesContext

from content.models import Pair
from exports.writer import export_dataset
from tests.exporting.conftest import build_rated

pytestmark = pytest.mark.django_db

BUDGET = 25  # fixed reads, the report's agreement figures, and 6 per batch of each task


@pytest.mark.parametrize("file_format", ["jsonl", "parquet"])
def test_queries_do_not_grow_with_the_number_of_pairs(tmp_path, file_format):
    rated = build_rated(tmp_path, count_extra=8)  # 12 rated pairs in t2i
    options = {"file_format": file_format, "include_dropped": True, "with_verdicts": True}
    with CaptureQueriesContext(connection) as many:
        big = export_dataset(rated.project, tmp_path / "many", **options)
    Pair.objects.filter(pk__in=[p.pk for p in rated.pairs[2:11]]).update(status="queued")
    with CaptureQueriesContext(connection) as few:
        small = export_dataset(rated.project, tmp_path / "few", **options)
    assert (big.pairs, small.pairs) == (14, 5)
    assert len(many) == len(few) <= BUDGET, [q["sql"][:120] for q in many.captured_queries]
