"""Processes that would not share a key refuse to start: gunicorn with several workers and
every Celery worker, on a throwaway SECRET_KEY (no SECRET_KEY, no key file). One process for a
quick try keeps its throwaway key (and `check`'s warning)."""

import os
import secrets
import socket
import subprocess
import sys
import urllib.request
from pathlib import Path

import pytest

from tests.waiting import wait_until

REPO_ROOT = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent
_CLEARED = ("DATABASE_URL", "REDIS_URL", "SECRET_KEY", "DJANGO_SETTINGS_MODULE")


def _env(tmp_path, **values) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in _CLEARED}
    env["ARBITER_VAR_DIR"] = str(tmp_path / "var")  # no key file there
    env["DATABASE_URL"] = f"sqlite:///{tmp_path / 'db.sqlite3'}"
    env.update(values)
    return env


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _gunicorn(env, workers: int, port: int) -> subprocess.Popen:
    command = [BIN / "gunicorn", "config.wsgi:application", "--bind", f"127.0.0.1:{port}"]
    return subprocess.Popen(
        [*map(str, command), "--workers", str(workers)],
        cwd=REPO_ROOT,
        env=env,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )


def _await_health(port: int, process: subprocess.Popen, deadline_s: float = 60) -> None:
    """Gunicorn answers its health check with a 200; fails, with its output, if it exits."""

    def healthy() -> bool:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=2) as reply:
                return reply.status == 200
        except OSError:
            return False

    wait_until(
        healthy,
        deadline_s,
        f"gunicorn to answer on port {port}",
        hopeless=lambda: process.poll() is not None and f"it exited: {process.stdout.read()}",
    )


def test_gunicorn_with_several_workers_refuses_a_throwaway_key(tmp_path):
    process = _gunicorn(_env(tmp_path), workers=2, port=_free_port())
    output, _ = process.communicate(timeout=60)
    assert process.returncode != 0
    assert "refuses to start" in output and "SECRET_KEY" in output


@pytest.mark.parametrize(
    ("workers", "secret_key"), [(2, secrets.token_urlsafe(45)), (1, None)], ids=["key", "one"]
)
def test_gunicorn_starts_with_a_shared_key_or_as_one_process(tmp_path, workers, secret_key):
    env = _env(tmp_path, **({"SECRET_KEY": secret_key} if secret_key else {}))
    port = _free_port()
    process = _gunicorn(env, workers=workers, port=port)
    try:
        _await_health(port, process)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_celery_worker_refuses_a_throwaway_key(tmp_path):
    result = subprocess.run(
        [str(BIN / "celery"), "-A", "config", "worker", "--pool", "solo", "--loglevel", "INFO"],
        cwd=REPO_ROOT,
        env=_env(tmp_path),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode != 0
    assert "refuses to start" in result.stdout + result.stderr
