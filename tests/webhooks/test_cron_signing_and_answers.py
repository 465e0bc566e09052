"""What an operator and a receiver rely on: `webhook_deliveries_send` from cron really sends
the due deliveries before it exits; the signature covers the sending time, so the documented
check refuses a captured delivery replayed later; the body names an export's format by its
key; and a lead reads only the status and a class of failure, never the receiver's reply."""

import importlib
import io
import re
import socket
import time
from datetime import timedelta
from pathlib import Path

import pytest
from django.core.management import call_command
from django.urls import reverse
from django.utils import timezone
from django.utils.translation import override

from core import outbox
from devtools.webhook_receiver import signature_check
from exports.models import ExportJobFormat
from projects.events import publish
from tests.webhooks.conftest import SECRET
from webhooks.models import Delivery, Subscription

pytestmark = pytest.mark.django_db

REAL_THREAD_START = outbox._thread_start  # before the site fixture runs threads inline
WEBHOOKS_DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def subscribe(site, kinds=("pair.decided",)):
    return Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=list(kinds)
    )


def due_deliveries(subscription, count):
    earlier = timezone.now() - timedelta(minutes=5)
    return [
        Delivery.objects.create(
            subscription=subscription,
            kind="pair.decided",
            payload={"event": "pair.decided", "project": "ann", "data": {"pair": n}},
            next_attempt_at=earlier,
            attempts=1,
            created_at=earlier,
        )
        for n in range(count)
    ]


def test_the_cron_command_sends_the_due_deliveries_before_it_exits(
    site, receiver, monkeypatch, settings
):
    # The embedded mode's background is a daemon thread, which dies with the command.
    monkeypatch.setattr(outbox, "_thread_start", REAL_THREAD_START)
    settings.CELERY_TASK_ALWAYS_EAGER = True
    deliveries = due_deliveries(subscribe(site), 5)
    receiver.statuses = [200, 200, 200, 200, 503]
    out = io.StringIO()

    call_command("webhook_deliveries_send", stdout=out)

    assert len(receiver.requests) == 5 and all(r["signed"] for r in receiver.requests)
    assert sorted(r["json"]["data"]["pair"] for r in receiver.requests) == [0, 1, 2, 3, 4]
    statuses = sorted(
        Delivery.objects.filter(pk__in=[d.pk for d in deliveries]).values_list("status", flat=True)
    )
    assert statuses == ["delivered"] * 4 + ["pending"]
    assert "5 due delivery(ies) attempted: 4 delivered, 1 to retry later, 0 failed" in (
        out.getvalue()
    )


def _one_delivery(site, receiver, fire):
    subscribe(site)
    with fire():
        publish(site.project, "pair.decided", {"pair": 7})
    (request,) = receiver.requests
    return request


def test_the_signature_covers_the_time_and_a_replay_is_refused(site, receiver, fire):
    request = _one_delivery(site, receiver, fire)
    header, body = request["headers"]["X-Arbiter-Signature"], request["body"]
    stamp = int(re.fullmatch(r"t=(\d+),v1=[0-9a-f]{64}", header).group(1))
    assert abs(stamp - time.time()) < 60
    assert signature_check(SECRET, header, body)

    # The same request captured and replayed six minutes later: refused.
    assert not signature_check(SECRET, header, body, now=stamp + 6 * 60)
    # A fresh timestamp pasted onto the captured signature: refused too (t is signed).
    fresh = header.replace(f"t={stamp}", f"t={stamp + 6 * 60}")
    assert not signature_check(SECRET, fresh, body, now=stamp + 6 * 60)
    assert not signature_check(SECRET, header, body + b" ")
    assert not signature_check("another secret", header, body)
    assert not signature_check(SECRET, "sha256=" + "0" * 64, body)  # the old form


def test_the_documented_receiver_check_refuses_a_replay(site, receiver, fire):
    """The check the webhooks page gives receivers is the one that holds."""
    code = next(
        block
        for block in re.findall(r"```python\n(.*?)```", WEBHOOKS_DOC.read_text(), re.DOTALL)
        if "def verified" in block
    )
    namespace: dict = {}
    exec(code.split("\nok = ")[0], namespace)
    verified = namespace["verified"]
    request = _one_delivery(site, receiver, fire)
    header, body = request["headers"]["X-Arbiter-Signature"], request["body"]
    stamp = int(header.split(",")[0].removeprefix("t="))
    assert verified(SECRET.encode(), header, body)
    assert not verified(SECRET.encode(), header, body, now=stamp + 301)
    assert not verified(SECRET.encode(), header, body.replace(b'"pair":7', b'"pair":8'))


def test_an_exports_format_is_sent_as_its_key(site, receiver, fire):
    subscribe(site, kinds=["export.ready"])
    with override("en"):  # what exports/jobs.py publishes: the format's English name
        label = str(ExportJobFormat.PARQUET.label)
    with fire():
        publish(site.project, "export.ready", {"job": 4, "format": label, "pairs": 12})
        publish(site.project, "export.ready", {"job": 5, "format": "mmrb2", "pairs": 3})
    formats = sorted(request["json"]["data"]["format"] for request in receiver.requests)
    assert formats == ["mmrb2", "parquet"]


def test_a_lead_reads_the_status_never_the_receivers_reply(site, receiver, fire, client):
    subscribe(site)
    receiver.statuses = [500]
    receiver.replies = [b"Traceback: db.internal:5432 password=hunter2"]
    with fire():
        publish(site.project, "pair.decided", {"pair": 7})
    delivery = Delivery.objects.get()
    assert delivery.last_status_code == 500
    assert delivery.last_error == "the receiver answered with an error"
    client.force_login(site.lead)
    page = client.get(reverse("project-webhooks", args=[site.project.slug])).content.decode()
    assert "HTTP 500" in page and "the receiver answered with an error" in page
    assert "hunter2" not in page and "db.internal" not in page


def test_an_unreachable_receiver_is_told_as_a_class_of_failure(site, fire):
    with socket.socket() as closed:  # a port nobody listens on
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    site.destination.url = f"http://127.0.0.1:{port}/internal-admin"
    site.destination.save()
    subscribe(site)
    with fire():
        publish(site.project, "pair.decided", {"pair": 7})
    delivery = Delivery.objects.get()
    assert delivery.last_status_code is None
    assert delivery.last_error == "the receiver refused the connection"


def test_old_deliveries_lose_the_receivers_words(site):
    subscription = subscribe(site)
    now = timezone.now()
    rows = {
        "HTTP 500: password=hunter2": 500,
        "HTTP 307: Location http://10.0.0.5/": 307,
        "not delivered: [Errno -2] db.internal": None,
        "the destination's signing secret is not set on the server": None,
    }
    for error, code in rows.items():
        Delivery.objects.create(
            subscription=subscription, kind="pair.decided", status="failed",
            last_error=error, last_status_code=code, created_at=now,
        )  # fmt: skip
    migration = importlib.import_module("webhooks.migrations.0002_last_error_generic")
    from django.apps import apps

    migration.last_errors_generalise(apps, None)
    assert sorted(Delivery.objects.values_list("last_error", flat=True)) == sorted(
        [
            "the receiver answered with an error",
            "the receiver answered with a redirect (not followed)",
            "the receiver could not be reached",
            "the destination's signing secret is not set on the server",
        ]
    )
