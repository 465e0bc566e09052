import core.db_indexes
from django.db import migrations

# The same index as before (INCLUDE on PostgreSQL, plain on SQLite), declared so that SQLite's
# system check has nothing to warn of: only the migration state changes.


class Migration(migrations.Migration):
    dependencies = [("content", "0006_claim_order_by_draw")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="pair", name="pair_project_version"),
                migrations.AddIndex(
                    model_name="pair",
                    index=core.db_indexes.CoveringIndex(
                        covering=("updated_at", "rating_count"),
                        fields=["project"],
                        name="pair_project_version",
                    ),
                ),
            ]
        )
    ]
