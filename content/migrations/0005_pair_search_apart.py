# The pair browser's search text leaves the pairs' rows for a table of its own (PairSearch):
# text and vector were 1.8 of a pair's 1.9 kB, which every dashboard's scan of the pairs read.

import django.db.models.deletion
from django.db import migrations, models

# PostgreSQL only, as in 0003: the stored full-text vector and its GIN index, now beside the
# text in content_pairsearch (dashboards/selectors/pair_browser.py searches it).
_ON_PAIRS = (
    "ALTER TABLE annotation_pair ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, search_text)) STORED",
    "CREATE INDEX IF NOT EXISTS pair_search_vector ON annotation_pair USING gin (search_vector)",
)
_OFF_PAIRS = (
    "DROP INDEX IF EXISTS pair_search_vector",
    "ALTER TABLE annotation_pair DROP COLUMN IF EXISTS search_vector",
)
_ON_SEARCH = (
    "ALTER TABLE content_pairsearch ADD COLUMN IF NOT EXISTS search_vector tsvector "
    "GENERATED ALWAYS AS (to_tsvector('simple'::regconfig, text)) STORED",
    "CREATE INDEX IF NOT EXISTS pairsearch_vector ON content_pairsearch USING gin (search_vector)",
)
_OFF_SEARCH = (
    "DROP INDEX IF EXISTS pairsearch_vector",
    "ALTER TABLE content_pairsearch DROP COLUMN IF EXISTS search_vector",
)


def _run(schema_editor, statements) -> None:
    if schema_editor.connection.vendor == "postgresql":
        for statement in statements:
            schema_editor.execute(statement)


def text_move(apps, schema_editor):
    schema_editor.execute(
        "INSERT INTO content_pairsearch (pair_id, text) SELECT id, search_text FROM annotation_pair"
    )
    _run(schema_editor, _OFF_PAIRS + _ON_SEARCH)


def text_move_back(apps, schema_editor):
    _run(schema_editor, _OFF_SEARCH)
    schema_editor.execute(
        "UPDATE annotation_pair SET search_text = COALESCE((SELECT s.text FROM content_pairsearch s"
        " WHERE s.pair_id = annotation_pair.id), '')"
    )
    _run(schema_editor, _ON_PAIRS)


class Migration(migrations.Migration):
    dependencies = [
        ("content", "0004_pair_project_version"),
    ]

    operations = [
        migrations.CreateModel(
            name="PairSearch",
            fields=[
                (
                    "pair",
                    models.OneToOneField(
                        on_delete=django.db.models.deletion.CASCADE,
                        primary_key=True,
                        related_name="search",
                        serialize=False,
                        to="content.pair",
                    ),
                ),
                ("text", models.TextField()),
            ],
        ),
        migrations.RunPython(text_move, text_move_back),
        migrations.RemoveField(
            model_name="pair",
            name="search_text",
        ),
    ]
