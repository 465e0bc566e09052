"""Services the operations tests control: a Redis server of their own, on its own port."""

import shutil
import socket
import subprocess
from contextlib import contextmanager

from tests.waiting import wait_until


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class OwnRedis:
    def __init__(self):
        self.port = _free_port()
        self.process = None

    def start(self):
        binary = shutil.which("redis-server")
        assert binary, "redis-server is needed (apt-get install redis-server)"
        self.process = subprocess.Popen(
            [binary, "--port", str(self.port), "--bind", "127.0.0.1", "--save", "",
             "--appendonly", "no"],
            stdout=subprocess.DEVNULL,
        )  # fmt: skip
        wait_until(self._listening, 15, "the test's Redis to listen", every=0.05)

    def _listening(self) -> bool:
        try:
            socket.create_connection(("127.0.0.1", self.port), timeout=0.1).close()
        except OSError:
            return False
        return True

    def stop(self):
        self.process.terminate()
        self.process.wait(timeout=10)


@contextmanager
def celery_broker(url: str, *, eager: bool = False):
    """This process's Celery app sends to `url` (and runs tasks in-process or not) inside the
    block; its producer pools, made for the old URL, are dropped on the way in and out."""
    from config.celery import app

    saved = app.conf.broker_url, app.conf.task_always_eager

    def use(broker_url, always_eager):
        app.conf.broker_url, app.conf.task_always_eager = broker_url, always_eager
        app._pool = None
        app.amqp._producer_pool = None

    use(url, eager)
    try:
        yield app
    finally:
        use(*saved)
