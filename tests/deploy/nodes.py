"""Arbiter nodes as separate processes for tests/deploy/test_many_nodes.py: gunicorn web nodes
and Celery workers on the test database and the test's Redis database, each with a local
folder of its own, and an annotator's cookie session over HTTP."""

import http.client
import os
import re
import signal
import subprocess
import sys
from http.cookies import SimpleCookie
from pathlib import Path
from urllib.parse import urlencode

from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


def database_url() -> str:
    s = connection.settings_dict
    return f"postgres://{s['USER']}@{s['HOST'] or '127.0.0.1'}:{s['PORT'] or 5432}/{s['NAME']}"


def node_env(folder: Path, extra: dict) -> dict:
    """A node's environment: the shared database, Redis and key; its own empty local folder
    (var and media) and nothing on a disk another node reads."""
    folder.mkdir(parents=True)
    return {
        **os.environ,
        "DATABASE_URL": database_url(),
        "REDIS_URL": settings.REDIS_URL,
        "SECRET_KEY": settings.SECRET_KEY,  # every node signs sessions and links alike
        "ARBITER_VAR_DIR": str(folder / "var"),
        "MEDIA_ROOT": str(folder / "media"),
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DEBUG": "false",
        "ALLOWED_HOSTS": "127.0.0.1,localhost",
        **extra,
    }


def _spawn(command: list[str], env: dict, log: Path) -> subprocess.Popen:
    return subprocess.Popen(
        command, cwd=ROOT, env=env, stdout=log.open("ab"), stderr=subprocess.STDOUT,
        start_new_session=True,
    )  # fmt: skip


def web_node(env: dict, port: int, log: Path) -> subprocess.Popen:
    """gunicorn with the project's gunicorn.conf.py, two sync workers."""
    command = [
        sys.executable,
        "-m",
        "gunicorn",
        "config.wsgi:application",
        "-c",
        "gunicorn.conf.py",
    ]
    command += ["--bind", f"127.0.0.1:{port}", "--workers", "2", "--timeout", "120"]
    return _spawn(command, env, log)


def worker_node(env: dict, name: str, log: Path) -> subprocess.Popen:
    command = [sys.executable, "-m", "celery", "-A", "config", "worker", "-P", "solo", "-n"]
    command += [f"{name}@%h", "--without-gossip", "--without-mingle", "--without-heartbeat"]
    return _spawn([*command, "-l", "INFO"], env, log)


def stop(process: subprocess.Popen, sig=signal.SIGTERM, seconds: float = 30) -> int:
    """Send `sig` to the node's process group; its exit status."""
    if process.poll() is None:
        os.killpg(process.pid, sig)
        try:
            process.wait(seconds)
        except subprocess.TimeoutExpired:
            os.killpg(process.pid, signal.SIGKILL)
            process.wait(10)
    return process.returncode


def web_ready(port: int) -> bool:
    try:
        return Session(port).request("GET", "/healthz")[0] == 200
    except OSError:
        return False


def worker_ready(log: Path) -> bool:
    return log.exists() and b" ready." in log.read_bytes()


class Session:
    """One user's cookie session on one web node (its own cookies, as a browser keeps)."""

    def __init__(self, port: int):
        self.port = port
        self.cookies: dict[str, str] = {}

    def on(self, port: int) -> "Session":
        """The same signed-in user, through another node."""
        other = Session(port)
        other.cookies = self.cookies
        return other

    def request(self, method: str, path: str, form=None, headers=None):
        """(status, headers, body bytes)."""
        sent = {"Host": f"127.0.0.1:{self.port}", **(headers or {})}
        if self.cookies:
            sent["Cookie"] = "; ".join(f"{k}={v}" for k, v in self.cookies.items())
        body = None
        if method == "POST":
            sent["X-CSRFToken"] = self.cookies.get("csrftoken", "")
            body = urlencode(form or {})
            sent["Content-Type"] = "application/x-www-form-urlencoded"
        client = http.client.HTTPConnection("127.0.0.1", self.port, timeout=60)
        try:
            client.request(method, path, body=body, headers=sent)
            response = client.getresponse()
            data = response.read()
        finally:
            client.close()
        for value in response.headers.get_all("Set-Cookie") or []:
            for name, morsel in SimpleCookie(value).items():
                self.cookies[name] = morsel.value
        return response.status, response.headers, data

    def login(self, username: str, password: str) -> None:
        status, _, page = self.request("GET", "/accounts/login/")
        token = re.search(rb'name="csrfmiddlewaretoken" value="([^"]+)"', page)
        assert status == 200 and token, status
        form = {"username": username, "password": password, "next": "/"}
        status, _, _ = self.request(
            "POST", "/accounts/login/", {**form, "csrfmiddlewaretoken": token.group(1).decode()}
        )
        assert status == 302 and "sessionid" in self.cookies, (username, status)
