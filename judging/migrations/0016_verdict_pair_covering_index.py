import core.db_indexes
from django.db import migrations

# The same index as before (INCLUDE on PostgreSQL, plain on SQLite), declared so that SQLite's
# system check has nothing to warn of: only the migration state changes.


class Migration(migrations.Migration):
    dependencies = [("judging", "0015_project_and_content_apps")]

    operations = [
        migrations.SeparateDatabaseAndState(
            state_operations=[
                migrations.RemoveIndex(model_name="verdict", name="verdict_pair_covering"),
                migrations.AddIndex(
                    model_name="verdict",
                    index=core.db_indexes.CoveringIndex(
                        covering=("judge", "order", "sample", "choice", "created_at"),
                        fields=["pair"],
                        name="verdict_pair_covering",
                    ),
                ),
            ]
        )
    ]
