"""Tests of a data migration: step the database back to the state before it, make rows with
the models of that state, step forward, check the rows. The tests after (in a serial run, on
the same database) need every migration: `latest_schema_after` brings it back."""

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor


def migrate_to(targets):
    """Migrate to `targets` ([(app, migration)]); the apps (models) of that state."""
    executor = MigrationExecutor(connection)
    executor.loader.build_graph()
    executor.migrate(targets)
    return executor.loader.project_state(targets).apps


@pytest.fixture
def latest_schema_after():
    yield
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
