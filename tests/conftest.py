"""Shared fixtures, and the rule for tests that need real services.

Tests marked `postgres`, `redis` or `browser` skip with a reason when the service is not
available, except in CI (CI=true), where a missing service fails them: CI must run them.
"""

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
from pathlib import Path

import pytest
from django.conf import settings as django_settings
from django.core.cache import cache, caches
from django.core.cache.backends.locmem import LocMemCache
from django.db import connection, connections

from tests.settling import counting_requests

# The tests' judges and webhook receivers are servers on 127.0.0.1 (devtools/): allowed, here
# and in the processes the tests start (core/outbound.py refuses them otherwise; its own tests
# turn this off).
os.environ["ARBITER_ALLOW_PRIVATE_ADDRESSES"] = "true"
django_settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
# The embedded mode's scheduler thread (core/scheduled_jobs.py) runs only where a test starts
# it: a module importing config.wsgi must not have it poll the test database.
django_settings.ARBITER_SCHEDULER_IN_PROCESS = False

SHARED_MMRB2 = Path(__file__).resolve().parents[2] / "shared" / "datasets" / "mmrb2"
IN_CI = os.environ.get("CI", "").lower() == "true"
CHROMIUM = os.environ.get("CHROMIUM_PATH", "/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]


def _missing_service(marker: str) -> str | None:
    if marker == "postgres" and connection.vendor != "postgresql":
        return "needs PostgreSQL: set DATABASE_URL=postgres://..."
    if marker == "redis" and not django_settings.REDIS_URL:
        return "needs Redis: set REDIS_URL=redis://..."
    if marker == "browser":
        if not Path(CHROMIUM).exists():
            return f"needs Chromium at {CHROMIUM} (apt-get install chromium)"
        try:
            import playwright  # noqa: F401
        except ImportError:
            return "needs the playwright package"
    return None


def pytest_runtest_setup(item):
    if "chromium_browser" not in item.fixturenames:
        _CHROMIUM.stop()  # a test without a browser gets no driver left running
    for marker in ("postgres", "redis", "browser"):
        if item.get_closest_marker(marker) is None:
            continue
        reason = _missing_service(marker)
        if reason and IN_CI:
            pytest.fail(f"CI must run this test but it {reason}", pytrace=False)
        if reason:
            pytest.skip(reason)
    if item.get_closest_marker("mmrb2") and not SHARED_MMRB2.is_dir():
        pytest.skip(f"the MMRB2 files are not at {SHARED_MMRB2}")


# The tests of the plain-Python metrics (pyproject.toml's import contract keeps Django out of
# metrics/): what they compute cannot differ by database, cache or broker. Those that touch no
# database are marked `backend_neutral`, which the second, embedded CI pass leaves out
# (.ci/run); `make test` runs them as every other test.
BACKEND_NEUTRAL_FOLDERS = ("tests/metrics/",)


def pytest_collection_modifyitems(config, items):
    root = Path(str(config.rootpath))
    for item in items:
        folder = Path(str(item.path)).relative_to(root).as_posix()
        if folder.startswith(BACKEND_NEUTRAL_FOLDERS) and not _uses_database(item):
            item.add_marker("backend_neutral")


def _uses_database(item) -> bool:
    fixtures = set(getattr(item, "fixturenames", ()))
    return item.get_closest_marker("django_db") is not None or bool(
        fixtures & {"db", "transactional_db", "live_server"}
    )


def _database_of_worker(url: str, worker_id: str) -> str:
    """Worker gwN's Redis URL: the database N below the one `url` names (CI names 15)."""
    from urllib.parse import urlsplit, urlunsplit

    parts = urlsplit(url)
    database = int(parts.path.strip("/") or 0) - int(worker_id.removeprefix("gw"))
    if database < 0:
        raise RuntimeError(f"{worker_id} has no Redis database below {url}")
    return urlunsplit(parts._replace(path=f"/{database}"))


@pytest.fixture(scope="session", autouse=True)
def _redis_of_this_worker(worker_id):
    """Each pytest-xdist worker takes a Redis database of its own, as pytest-django gives it a
    test database of its own, so that two workers' caches, sign-in counters, brokers and
    Celery workers never meet. Set here rather than in the settings: a worker reads its
    settings before it knows its name. Processes a test starts inherit the URL."""
    if not django_settings.REDIS_URL or not worker_id.startswith("gw"):
        yield
        return
    from django.test.utils import override_settings

    from config.celery import app

    url = _database_of_worker(django_settings.REDIS_URL, worker_id)
    cache = {**django_settings.CACHES["default"], "LOCATION": url}
    shared = (os.environ.get("REDIS_URL"), app.conf.broker_url)
    with override_settings(REDIS_URL=url, CELERY_BROKER_URL=url, CACHES={"default": cache}):
        os.environ["REDIS_URL"], app.conf.broker_url = url, url
        # A previous run's counters (rate limits keyed by ids the new test database gives
        # again) must not refuse this run's first posts.
        caches["default"].clear()
        yield
    (os.environ["REDIS_URL"], app.conf.broker_url) = shared


@pytest.fixture(autouse=True)
def _one_clock_test_at_a_time(request, tmp_path_factory):
    """Tests marked `judge_clock` time a judge against a fake provider in real time; two at
    once on two cores starve each other. A lock in the folder every xdist worker's temporary
    folder sits in keeps them one at a time (the other workers go on with other tests).
    Not an xdist group: grouping collapses the schema fuzz test's 40 items, which share one
    node id, into one."""
    if request.node.get_closest_marker("judge_clock") is None:
        yield
        return
    lock = tmp_path_factory.getbasetemp().parent / "judge-clock.lock"
    with open(lock, "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        yield


@pytest.fixture(scope="session")
def django_db_modify_db_settings(django_db_modify_db_settings_parallel_suffix, tmp_path_factory):
    """SQLite's test database is a file, as the embedded app's is, not Django's default
    shared-cache memory database: there a thread (the embedded judge worker, the live
    server) that meets a writer fails at once with "database table is locked" instead of
    waiting on the busy timeout. tmp_path_factory's folder is already per xdist worker."""
    database = django_settings.DATABASES["default"]
    if database["ENGINE"].endswith("sqlite3"):
        database.setdefault("TEST", {})["NAME"] = str(tmp_path_factory.mktemp("db") / "test.db")
    elif database["ENGINE"].endswith("postgresql"):
        # A test database is thrown away: a commit need not wait for its WAL to reach the disk
        # (each flush commits some thirty times, a transactional test more). What a test sees
        # is the same: only a server crash could lose the last commits.
        options = database.setdefault("OPTIONS", {})
        options["options"] = f"{options.get('options', '')} -c synchronous_commit=off".strip()


@pytest.fixture(scope="session", autouse=True)
def _postgresql_flush_deletes_rows():
    """A transactional test (and a browser test's live server) ends with a flush, which on
    PostgreSQL is one TRUNCATE of every table: a new file per table and index, ~1 s each time,
    when the tables hold a few rows. DELETE empties them in milliseconds; Django's foreign keys
    there are deferred, so the order does not matter within the flush's transaction. Tables
    whose own triggers refuse DELETE (the audit trail's) are still truncated, first: before the
    deletes queue any deferred check on them. A flush that resets sequences or cascades keeps
    Django's statement."""
    from django.db.backends.postgresql.operations import DatabaseOperations

    truncate_only = {}  # connection alias: the tables with triggers of their own

    def sql_flush(self, style, tables, *, reset_sequences=False, allow_cascade=False):
        if reset_sequences or allow_cascade or not tables:
            return original(
                self, style, tables, reset_sequences=reset_sequences, allow_cascade=allow_cascade
            )
        alias = self.connection.alias
        if alias not in truncate_only:
            with self.connection.cursor() as cursor:
                cursor.execute(
                    "SELECT DISTINCT c.relname FROM pg_trigger t JOIN pg_class c"
                    " ON c.oid = t.tgrelid WHERE NOT t.tgisinternal"
                )
                truncate_only[alias] = {name for (name,) in cursor.fetchall()}
        guarded = [t for t in tables if t in truncate_only[alias]]
        statements = original(self, style, guarded) if guarded else []
        return statements + [
            f"DELETE FROM {self.quote_name(t)};" for t in tables if t not in guarded
        ]

    original = DatabaseOperations.sql_flush
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(DatabaseOperations, "sql_flush", sql_flush)
        yield


@pytest.fixture
def tasks_in_process(request, settings):
    """Celery tasks (judge chunks, exports) execute inside the test, even when REDIS_URL
    points Celery at Redis (the CI run), except in tests marked `worker`, which start one."""
    if request.node.get_closest_marker("worker"):
        yield
        return
    from config.celery import app

    eager = app.conf.task_always_eager  # read first: the conf loads lazily from the settings
    settings.CELERY_TASK_ALWAYS_EAGER = True
    app.conf.task_always_eager = True
    yield
    app.conf.task_always_eager = eager


@pytest.fixture(autouse=True)
def _cache_starts_afresh():
    """Rate limits count in the cache, keyed by ids that SQLite gives again from one test to
    the next: there each test starts and leaves with an empty local-memory cache. Redis is
    left alone: PostgreSQL never repeats an id, and the Redis database is also the broker of
    a module's Celery worker, whose queue bindings a flush would delete."""
    local = isinstance(caches["default"], LocMemCache)
    if local:
        cache.clear()
    yield
    if local:
        cache.clear()


@pytest.fixture(autouse=True)
def _fast_password_hasher(settings):
    """Users are made by the hundred in tests: a deliberately slow hash would dominate the
    suite's time and proves nothing here (the production hasher is Django's default)."""
    settings.PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]


@pytest.fixture(autouse=True)
def _figures_computed_in_the_request(settings):
    """The suite's small projects always get current dashboard figures, even when a loaded
    machine takes over 500 ms for them (tests/dashboards/test_snapshots.py sets a slow
    page's time above this)."""
    settings.ARBITER_FIGURES_INLINE_MS = 30_000


@pytest.fixture(autouse=True)
def _figures_not_ahead(settings):
    """No background refresh of the dashboards' figures after every import and judge run of
    the suite (a thread per page); tests/dashboards/test_figures_ahead.py turns it on."""
    settings.ARBITER_FIGURES_AHEAD = False


@pytest.fixture(autouse=True)
def _each_test_starts_in_the_default_language():
    """A request in Chinese leaves Chinese active in its thread (LocaleMiddleware activates the
    request's language and nothing resets it between tests): a later test in the same worker
    that calls a service directly would read its refusals in Chinese."""
    from django.utils import translation

    translation.deactivate()
    yield
    translation.deactivate()


@pytest.fixture(autouse=True)
def _media_in_tmp(settings, tmp_path):
    """Every test writes media into its own folder, never into the checkout."""
    settings.MEDIA_ROOT = tmp_path / "media"
    yield settings.MEDIA_ROOT
    shutil.rmtree(tmp_path / "media", ignore_errors=True)


@pytest.fixture
def lead(project):
    """A lead of the test's `project` (each folder or module says which project that is):
    "boss", boss@example.org, not signed in; `lead_client` is the test client signed in."""
    from projects.models import Membership
    from tests.factories import member

    user = member("boss", project, role=Membership.Role.LEAD)
    user.email = "boss@example.org"
    user.save(update_fields=["email"])
    return user


@pytest.fixture
def lead_client(client, lead):
    client.force_login(lead)
    return client


@pytest.fixture
def lead_signs_in(request, client):
    """A module marked `pytest.mark.usefixtures("lead_signs_in")` acts as the lead, on
    `client`, in every test that takes the lead."""
    if "lead" in request.fixturenames:
        client.force_login(request.getfixturevalue("lead"))


@pytest.fixture(scope="session")
def mmrb2_images(tmp_path_factory, worker_id):
    """Placeholder images for every file the MMRB2 pair files name (their own script), made
    once a run: the xdist workers share a folder beside their own (minutes each on a loaded
    machine). The script leaves existing files alone; a lock lets one worker write at a time,
    so none reads the folder before it is whole."""
    import subprocess
    import sys

    if worker_id.startswith("gw"):
        folder = tmp_path_factory.getbasetemp().parent / "mmrb2-images"
    else:
        folder = tmp_path_factory.mktemp("mmrb2-images")
    with open(folder.parent / "mmrb2-images.lock", "w") as handle:
        fcntl.flock(handle, fcntl.LOCK_EX)
        subprocess.run(
            [sys.executable, str(SHARED_MMRB2 / "make_placeholder_images.py"), str(folder)],
            check=True,
            capture_output=True,
        )
    return folder


def watch_errors(page):
    """Collect the page's console errors and uncaught exceptions in `page.console_errors`."""
    errors = []
    page.on(
        "console",
        lambda m: errors.append(f"{m.text} {m.location}") if m.type == "error" else None,
    )
    page.on("pageerror", lambda error: errors.append(f"uncaught: {error}"))
    page.console_errors = errors
    return page


class _RequestsInFlight:
    """Counts the requests the live server is answering (Django's request signals)."""

    def __init__(self) -> None:
        import threading

        from django.core.signals import request_finished, request_started

        self.count, self.lock = 0, threading.Lock()
        request_started.connect(self._started, weak=False, dispatch_uid="tests.in_flight.start")
        request_finished.connect(self._finished, weak=False, dispatch_uid="tests.in_flight.end")

    def _started(self, **_) -> None:
        with self.lock:
            self.count += 1

    def _finished(self, **_) -> None:
        with self.lock:
            self.count -= 1

    def wait_until_idle(self, seconds: float = 30.0) -> None:
        from django.core.signals import request_finished, request_started

        from tests.waiting import wait_until

        try:
            wait_until(
                lambda: self.count <= 0, seconds, "the live server's requests to end", every=0.02
            )
        finally:
            request_started.disconnect(dispatch_uid="tests.in_flight.start")
            request_finished.disconnect(dispatch_uid="tests.in_flight.end")


class _SharedChromium:
    """One Playwright driver and Chromium for the browser tests that follow one another in a
    worker: starting them costs seconds a test. Playwright's sync API keeps an event loop
    running in this thread while it lives; between tests the loop is paused (this thread
    shows none), so that the fixtures and teardowns around a browser test, and any other
    test, run as they did with a browser of their own: the ORM without its async guard lifted,
    asyncio.run able to start. The driver stops before a test that does not use it."""

    def __init__(self) -> None:
        self.manager = self.browser = None
        self.paused = None  # Playwright's loop while paused
        self.async_unsafe = None  # DJANGO_ALLOW_ASYNC_UNSAFE before a test lifted the guard

    def get(self):
        if self.manager is not None:
            self._resume()
            if not self.browser.is_connected():
                self.stop()
        if self.manager is None:
            from playwright.sync_api import sync_playwright

            self.manager = sync_playwright()
            playwright = self.manager.__enter__()
            self.browser = counting_requests(
                playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            )
        # The loop runs in this thread now; the ORM calls of the test stay synchronous.
        self.async_unsafe = os.environ.get("DJANGO_ALLOW_ASYNC_UNSAFE")
        os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = "true"
        return self.browser

    def pause(self) -> None:
        if self.manager is None or self.paused is not None:
            return
        self.paused = asyncio.events._get_running_loop()
        asyncio.events._set_running_loop(None)
        if self.async_unsafe is None:
            os.environ.pop("DJANGO_ALLOW_ASYNC_UNSAFE", None)
        else:
            os.environ["DJANGO_ALLOW_ASYNC_UNSAFE"] = self.async_unsafe

    def _resume(self) -> None:
        if self.paused is not None:
            asyncio.events._set_running_loop(self.paused)
            self.paused = None

    def stop(self) -> None:
        if self.manager is None:
            return
        self._resume()  # Playwright ends its connection in its own running loop
        try:
            with contextlib.suppress(Exception):
                self.browser.close()
            self.manager.__exit__(None, None, None)
        finally:
            self.manager = self.browser = None
            connections.close_all()


_CHROMIUM = _SharedChromium()


def pytest_sessionfinish(session):
    _CHROMIUM.stop()


@pytest.fixture
def chromium_browser():
    """Debian's Chromium, headless, driven by Playwright (tests marked `browser`): shared with
    the browser tests before and after this one in the worker; every context (cookies,
    storage, pages) this test opened is closed when it ends."""
    serving = _RequestsInFlight()
    browser = _CHROMIUM.get()
    try:
        yield browser
    finally:
        try:
            for context in browser.contexts:
                with contextlib.suppress(Exception):
                    context.close()
            # A request the page left running (a lazy image, a poll) must end before the
            # test's database is emptied: its locks and the flush's would deadlock.
            serving.wait_until_idle()
            # ORM calls made while Playwright's loop runs get their own connections (Django's
            # connections are context-local); close them here, in that context.
            connections.close_all()
        finally:
            _CHROMIUM.pause()


@pytest.fixture
def browser_page(chromium_browser):
    """A fresh page with JavaScript; `page.console_errors` lists what went wrong in it."""
    return watch_errors(chromium_browser.new_page())


# Figures a test records (`record_property("figures", {...})`, the many-nodes test), printed in
# the terminal summary: pytest-xdist shows nothing a worker prints, and CI runs on every core.
# Here, in the conftest the controller loads, not in tests/deploy/ (which only workers load).
def pytest_terminal_summary(terminalreporter):
    for status in ("passed", "failed"):
        for report in terminalreporter.stats.get(status, []):
            for name, value in getattr(report, "user_properties", []):
                if name == "figures":
                    terminalreporter.write_line(f"{report.nodeid} ({status}): {json.dumps(value)}")
