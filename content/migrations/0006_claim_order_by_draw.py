# The claim serves the pairs nobody started by their uniform draw, not by id (import order):
# the index it walks follows (annotation/selectors/pairs.py::in_claim_order).

from django.db import migrations, models


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0005_pair_search_apart"),
    ]

    operations = [
        migrations.RemoveIndex(model_name="pair", name="pair_open_claim_order"),
        migrations.AddIndex(
            model_name="pair",
            index=models.Index(
                condition=models.Q(("status__in", ("queued", "in_progress"))),
                fields=["task", "-rating_count", "draw", "id"],
                name="pair_open_claim_order",
            ),
        ),
    ]
