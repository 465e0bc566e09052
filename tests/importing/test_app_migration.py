"""Upgrading a database made before the import jobs left the annotation app for the imports
app: the table stays, every job survives with its links, and the rights granted on import
jobs (and the audit trail's entries about them) follow their content type."""

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from imports.models import ImportJob
from projects.models import Project
from tests.migration_steps import latest_schema_after, migrate_to  # noqa: F401  (a fixture)

# A real transaction: migrations cannot run inside the test's.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("latest_schema_after"),
]

THE_MOVE = [("imports", "0001_initial"), ("annotation", "0021_import_job_to_imports")]


def test_an_old_database_keeps_its_import_jobs_their_links_and_rights():
    # The imports app back to nothing takes annotation/0021, the move, with it.
    executor = MigrationExecutor(connection)
    executor.migrate([("imports", None)])
    executor.loader.build_graph()
    old = executor.loader.project_state([("annotation", "0020_assignment_skipped_at")]).apps
    tables = set(connection.introspection.table_names())
    assert "annotation_importjob" in tables and not any(t.startswith("imports_") for t in tables)
    content_type = old.get_model("contenttypes", "ContentType")
    old_type = content_type.objects.get(app_label="annotation", model="importjob")
    assert not content_type.objects.filter(app_label="imports").exists()
    user_model = old.get_model("auth", "User")
    lead = user_model.objects.create(username="lead")
    permission = old.get_model("auth", "Permission").objects.get(
        content_type=old_type, codename="view_importjob"
    )
    lead.user_permissions.add(permission)
    # The projects app's tables stay at their latest schema: its own model makes the row.
    project = Project.objects.create(slug="p", name="P")
    job = old.get_model("annotation", "ImportJob").objects.create(
        project_id=project.pk, requested_by=lead, task_slug="t2i", file_name="pairs.zip",
        status="done", pairs_written=12, summary={"pairs": 12}, attempts=1,
    )  # fmt: skip

    migrate_to(THE_MOVE)
    assert set(connection.introspection.table_names()) == tables  # no table made or dropped
    migrate_to(executor.loader.graph.leaf_nodes())  # and what came after, for the ORM
    moved = ImportJob.objects.select_related("project", "requested_by").get(pk=job.pk)
    assert (moved.project.slug, moved.requested_by.username, moved.task_slug) == (
        "p",
        "lead",
        "t2i",
    )
    assert (moved.status, moved.pairs_written, moved.summary, moved.attempts) == (
        ImportJob.Status.DONE,
        12,
        {"pairs": 12},
        1,
    )
    assert ContentType.objects.get_for_model(ImportJob).pk == old_type.pk
    assert not ContentType.objects.filter(app_label="annotation", model="importjob").exists()
    assert User.objects.get(username="lead").has_perm("imports.view_importjob")
