"""`make demo` says what it did and nothing else: no system check warning from `migrate`, no
log line from the libraries. It printed kombu's "No hostname was supplied" (the embedded
mode's broker URL named no host) and two `models.W040` (covering indexes on SQLite)."""

import logging
import os
import subprocess
import sys
from pathlib import Path

import pytest
from django.core import checks
from django.db import connection, models
from django.test.utils import isolate_apps

from core.db_indexes import CoveringIndex

ROOT = Path(__file__).resolve().parents[2]
MAKE_DEMO = (["init_embedded"], ["migrate", "--noinput"], ["demo"])  # the Makefile's steps
QUIET = ("warning", "no hostname", "w040", "traceback")


def _loud(text: str) -> list[str]:
    return [line for line in text.splitlines() if any(word in line.lower() for word in QUIET)]


@pytest.mark.django_db
def test_the_system_checks_on_the_database_warn_of_nothing():
    """What `migrate` runs before migrating (the checks that look at the database too). The
    throwaway key's warning aside: `make demo` writes a key first (`init_embedded`), as the
    last test does."""
    found = checks.run_checks(databases=["default"])
    found = [message for message in found if message.id != "arbiter.W001"]
    assert [f"{message.id}: {message.obj}" for message in found] == []


def test_the_embedded_broker_names_its_host(caplog):
    """Celery opens a connection to the broker even to run a task in-process (eager). The
    embedded settings are read in a process of their own (this one may have REDIS_URL)."""
    from celery import Celery

    env = {k: v for k, v in os.environ.items() if k not in ("DATABASE_URL", "REDIS_URL")}
    read = "from django.conf import settings; print(settings.CELERY_BROKER_URL)"
    url = (
        subprocess.run(
            [sys.executable, "manage.py", "shell", "-c", read],
            cwd=ROOT,
            env={**env, "DJANGO_SETTINGS_MODULE": "config.settings"},
            capture_output=True,
            text=True,
            check=True,
        )
        .stdout.strip()
        .splitlines()[-1]
    )  # after shell's own line about its imports
    assert url.startswith("memory://")
    with caplog.at_level(logging.WARNING), Celery(broker=url).connection_for_write() as broker:
        broker.info()  # what a producer reads when it connects
    assert [record.getMessage() for record in caplog.records] == []


@pytest.mark.django_db
@isolate_apps("demo")
def test_a_covering_index_is_plain_where_the_database_has_no_include():
    class Row(models.Model):  # noqa: DJ008
        key = models.IntegerField()
        extra = models.IntegerField()

        class Meta:
            app_label = "demo"
            indexes = [CoveringIndex(fields=["key"], covering=["extra"], name="row_covering")]

    class Warned(models.Model):  # noqa: DJ008
        key = models.IntegerField()
        extra = models.IntegerField()

        class Meta:
            app_label = "demo"
            indexes = [models.Index(fields=["key"], include=["extra"], name="warned_include")]

    assert [m.id for m in Row.check(databases=["default"])] == []
    editor = connection.schema_editor(collect_sql=True)  # not entered: only its SQL is read
    sql = str(Row._meta.indexes[0].create_sql(Row, editor))
    assert ("INCLUDE" in sql) == connection.features.supports_covering_indexes
    if not connection.features.supports_covering_indexes:
        # The warning this index does without, for the index Django has.
        assert [m.id for m in Warned.check(databases=["default"])] == ["models.W040"]
    path, _, kwargs = Row._meta.indexes[0].deconstruct()
    assert path == "core.db_indexes.CoveringIndex" and kwargs["covering"] == ("extra",)


def test_make_demo_prints_no_warning(tmp_path):
    """The Makefile's steps, each its own process on a fresh SQLite database, as a user runs
    them (no Redis, no DATABASE_URL): their output holds no warning."""
    env = {
        key: value
        for key, value in os.environ.items()
        if key not in {"DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE"}
    }
    env["ARBITER_VAR_DIR"] = str(tmp_path / "var")
    for step in MAKE_DEMO:
        done = subprocess.run(
            [sys.executable, "manage.py", *step],
            cwd=ROOT,
            env=env,
            capture_output=True,
            text=True,
            timeout=600,
        )
        assert done.returncode == 0, (step, done.stderr[-2000:])
        assert _loud(done.stdout + done.stderr) == [], step
