"""Upgrading a database with DRF's tokens (one per user, kept in clear): each becomes a hashed
API token that keeps working, and DRF's table keeps no key."""

import hashlib

import pytest
from django.db import connection
from django.db.migrations.executor import MigrationExecutor
from django.utils import timezone
from rest_framework.test import APIClient

from tests.migration_steps import latest_schema_after, migrate_to  # noqa: F401  (a fixture)

# A real transaction: migrations cannot run inside the test's.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("latest_schema_after"),
]

BEFORE = [("projects", "0007_api_tokens")]
AFTER = [("projects", "0008_api_tokens_from_drf")]
DRF_KEY = "9944b09199c62bcf9418ad846dd0e4bbdfc6ee4b"


@pytest.fixture
def drf_table():
    """DRF's authtoken table as its migrations made it (the app is no longer installed)."""
    with connection.cursor() as cursor:
        cursor.execute(
            "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created timestamp with time zone NOT NULL, user_id integer NOT NULL UNIQUE)"
            if connection.vendor == "postgresql"
            else "CREATE TABLE authtoken_token (key varchar(40) PRIMARY KEY, "
            "created datetime NOT NULL, user_id integer NOT NULL UNIQUE)"
        )
    yield
    with connection.cursor() as cursor:
        cursor.execute("DROP TABLE authtoken_token")


def test_drf_tokens_are_hashed_into_api_tokens_and_keep_working(drf_table):
    old = migrate_to(BEFORE)
    user = old.get_model("auth", "User").objects.create(username="pipeline", is_active=True)
    created = timezone.now() - timezone.timedelta(days=400)
    with connection.cursor() as cursor:
        cursor.execute(
            "INSERT INTO authtoken_token (key, created, user_id) VALUES (%s, %s, %s)",
            [DRF_KEY, created, user.pk],
        )

    new = migrate_to(AFTER)
    token = new.get_model("projects", "ApiToken").objects.get()
    assert token.user_id == user.pk and token.name == "migrated DRF token"
    assert token.digest == hashlib.sha256(DRF_KEY.encode()).hexdigest()
    assert token.prefix == DRF_KEY[:8] and token.access == "write" and token.project_id is None
    assert (token.expires_at - timezone.now()).days in (89, 90)
    assert abs((token.created_at - created).total_seconds()) < 1
    with connection.cursor() as cursor:
        cursor.execute("SELECT COUNT(*) FROM authtoken_token")
        assert cursor.fetchone()[0] == 0  # no key left in clear

    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())
    api = APIClient()
    api.credentials(HTTP_AUTHORIZATION=f"Token {DRF_KEY}")
    assert api.get("/api/projects/").status_code == 200


def test_tokens_made_by_the_sign_in_endpoint_before_are_marked_as_such():
    old = migrate_to(AFTER)
    user = old.get_model("auth", "User").objects.create(username="script", is_active=True)
    tokens = old.get_model("projects", "ApiToken").objects
    expires = timezone.now() + timezone.timedelta(days=30)
    for name, digest in (("POST /api/auth/token/", "a"), ("nightly export", "b")):
        tokens.create(user=user, name=name, prefix="arb_x", digest=digest * 64,
                      expires_at=expires)  # fmt: skip

    new = migrate_to([("projects", "0009_api_token_from_sign_in")])
    marked = new.get_model("projects", "ApiToken").objects.values_list("name", "from_sign_in")
    assert dict(marked) == {"POST /api/auth/token/": True, "nightly export": False}
