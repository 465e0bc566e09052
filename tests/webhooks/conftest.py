"""A receiver on 127.0.0.1 (an http.server in a thread, on a free port) that checks each
request's signature with its secret, as the webhooks page (docs/webhooks.md) tells receivers to
(devtools/webhook_receiver.py); a project whose lead subscribes, a second project whose
lead must reach nothing of the first; `fire()` commits what a block did and sends its events.
Deliveries leave in the background (core/outbox.py): here the background runs inline."""

import json

import pytest

from core import outbox
from devtools.webhook_receiver import signature_check
from tests.factories import member, queued_pairs
from tests.loopback import LoopbackServer, QuietHandler
from webhooks.models import Destination

SECRET = "s3cret-for-tests"


class Receiver:
    """Answers each POST with the next of `statuses` (then 200) and of `replies` (then a
    default body), recording what came."""

    def __init__(self, secret: str):
        self.secret = secret
        self.statuses: list[int] = []
        self.replies: list[bytes] = []
        self.requests: list[dict] = []
        receiver = self

        class Handler(QuietHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                receiver.requests.append(
                    {
                        "path": self.path,
                        "headers": dict(self.headers),
                        "body": body,
                        "signed": signature_check(
                            receiver.secret, self.headers.get("X-Arbiter-Signature", ""), body
                        ),
                        "json": json.loads(body),
                    }
                )
                status = receiver.statuses.pop(0) if receiver.statuses else 200
                self.send_response(status)
                self.end_headers()
                default = b"x" * 5000 if status >= 500 else b"ok"
                self.wfile.write(receiver.replies.pop(0) if receiver.replies else default)

        self.served = LoopbackServer(Handler)
        self.url = f"{self.served.site}/hook"

    def close(self):
        self.served.close()


@pytest.fixture
def receiver():
    server = Receiver(SECRET)
    yield server
    server.close()


@pytest.fixture
def attacker():
    """A second receiver: a URL a lead would like events sent to. It must receive nothing."""
    server = Receiver("irrelevant")
    yield server
    server.close()


@pytest.fixture
def site(tmp_path, tasks_in_process, monkeypatch, receiver):
    monkeypatch.setattr(outbox, "_thread_start", lambda work, *args: work(*args))
    monkeypatch.setenv("ARBITER_TEST_WEBHOOK_SECRET", SECRET)
    task = queued_pairs(tmp_path, count=2)
    other = queued_pairs(tmp_path, project_slug="other", count=2)

    class Site:
        pass

    site = Site()
    site.task, site.project, site.other = task, task.project, other.project
    site.lead = member("boss", site.project, role="lead")
    site.ann = member("ann", site.project)
    site.outsider = member("outsider", site.other, role="lead")
    site.destination = Destination.objects.create(
        name="pipeline", url=receiver.url, secret_env="ARBITER_TEST_WEBHOOK_SECRET"
    )
    site.destination.projects.set([site.project])
    return site


@pytest.fixture
def fire(django_capture_on_commit_callbacks):
    """`with fire(): ...`: what the block does is committed, and its events are sent."""
    return lambda: django_capture_on_commit_callbacks(execute=True)
