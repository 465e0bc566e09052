"""Fixtures of the judging tests: the fake OpenAI-compatible server and judged pairs."""

import pytest

from devtools.fake_llm import FakeLLMServer
from judging.services.judges import connection_save, judge_save
from tests.factories import queued_pairs


@pytest.fixture(autouse=True)
def _tasks_in_process(tasks_in_process):
    """Judge runs execute their chunks inside the test (tests/conftest.py)."""


@pytest.fixture(autouse=True)
def _fresh_judge_limits(settings):
    """With Redis, a judge's limiter state (window, pause, schedule) lives there for an hour:
    a judge of an earlier test (or run) with the same id must not lend it its window."""
    if settings.REDIS_URL:
        import redis

        client = redis.from_url(settings.REDIS_URL)
        keys = list(client.scan_iter("arbiter:judge:*"))
        if keys:
            client.delete(*keys)
        client.close()


@pytest.fixture
def fake_llm():
    server = FakeLLMServer()
    server.start()
    yield server
    server.stop()


@pytest.fixture
def pairs_task(tmp_path):
    """A project `ann` with a t2i task of 6 pairs (each response holds one image)."""
    return queued_pairs(tmp_path, count=6)


def fake_connection(server, name="fake", *, backend="openai", api_key_env="", **scope):
    """The operator's connection to the fake server (every project may use it by default)."""
    scope.setdefault("all_projects", True)
    base_url = server.base_url if backend == "openai" else server.base_url[:-3]
    connection, _ = connection_save(
        name, backend=backend, base_url=base_url, api_key_env=api_key_env, **scope
    )
    return connection


def openai_judge(server, name="gpt-fake", *, project=None, api_key_env="", **settings):
    defaults = {"model": "fake-model", "concurrency": 8, "requests_per_minute": 60_000}
    judge, _ = judge_save(
        name,
        project=project,
        backend="openai",
        connection=fake_connection(server, f"fake-{name}", api_key_env=api_key_env),
        **{**defaults, "timeout_seconds": 5, **settings},
    )
    return judge
