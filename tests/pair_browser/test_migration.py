"""Content migration 0003 fills the searchable text of the pairs a database already holds
(and, on PostgreSQL, their stored full-text vector), so the pair browser finds them; 0005
moves text and vector to a table of their own (PairSearch), and back when migrated back."""

import pytest
from django.db import connection

from projects.models import Project, Task
from tests.migration_steps import latest_schema_after, migrate_to  # noqa: F401  (a fixture)

# A real transaction: migrations cannot run inside the test's.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("latest_schema_after"),
]

BEFORE = [("content", "0002_sample_draws")]
AFTER = [("content", "0003_pair_search_text")]


def test_existing_pairs_get_their_prompt_and_response_text_source_and_id():
    old = migrate_to(BEFORE)
    # The projects app's tables stay at their latest schema: its own models make the rows.
    project = Project.objects.create(slug="p", name="P")
    task = Task.objects.create(project=project, slug="t", name="T").pk
    project = project.pk
    generator = old.get_model("content", "Generator").objects.create(name="g")
    response = old.get_model("content", "Response").objects
    prompt = old.get_model("content", "Prompt").objects.create(
        project_id=project, content=[["text", "A lighthouse at dusk"], ["image", "ab" * 32]],
        fingerprint="f", source="arena",
    )  # fmt: skip
    shipped_without_prompt = old.get_model("content", "Prompt").objects.create(
        project_id=project, content=None, fingerprint="g"
    )
    a = response.create(generator=generator, content=[["text", "Gulls over the rocks"]])
    b = response.create(generator=generator, content=[["image", "cd" * 32]])
    pair = old.get_model("content", "Pair").objects
    pair.create(project_id=project, task_id=task, external_id="x-1", prompt=prompt,
                response_a=a, response_b=b, source="arena")  # fmt: skip
    pair.create(project_id=project, task_id=task, external_id="x-2", prompt=shipped_without_prompt,
                response_a=b, response_b=a)  # fmt: skip

    new = migrate_to(AFTER)
    texts = dict(new.get_model("content", "Pair").objects.values_list("external_id", "search_text"))
    assert texts == {
        "x-1": "x-1\narena\nA lighthouse at dusk\nGulls over the rocks",
        "x-2": "x-2\nGulls over the rocks",
    }
    if connection.vendor == "postgresql":
        with connection.cursor() as cursor:
            cursor.execute(
                "SELECT external_id FROM annotation_pair WHERE search_vector @@ "
                "websearch_to_tsquery('simple', 'lighthouse')"
            )
            assert cursor.fetchall() == [("x-1",)]

    def _found(sql: str) -> list:
        with connection.cursor() as cursor:
            cursor.execute(sql)
            return cursor.fetchall()

    apart = migrate_to([("content", "0005_pair_search_apart")])
    searched = apart.get_model("content", "PairSearch").objects
    assert dict(searched.values_list("pair__external_id", "text")) == texts
    if connection.vendor == "postgresql":
        assert _found(
            "SELECT p.external_id FROM content_pairsearch s JOIN annotation_pair p ON p.id = "
            "s.pair_id WHERE s.search_vector @@ websearch_to_tsquery('simple', 'gulls') "
            "ORDER BY 1"
        ) == [("x-1",), ("x-2",)]

    back = migrate_to([("content", "0004_pair_project_version")])
    pairs = back.get_model("content", "Pair").objects
    assert dict(pairs.values_list("external_id", "search_text")) == texts
    if connection.vendor == "postgresql":
        assert _found(
            "SELECT external_id FROM annotation_pair WHERE search_vector @@ "
            "websearch_to_tsquery('simple', 'lighthouse')"
        ) == [("x-1",)]
