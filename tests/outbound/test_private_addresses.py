"""Arbiter connects only to public addresses unless the operator allows private ones
(core/outbound.py): the address checked is the one the socket connects to, so neither a
literal, nor a name that resolves to loopback, nor an IPv4-mapped IPv6 address slips through.
The judges' calls and the webhooks' deliveries both go through it; a refusal is never retried
and reaches no server."""

import asyncio

import pytest
from django.utils import timezone

from core.outbound import address_refusal, run_blocking
from judging.models import JudgeRun
from judging.services.runs import judge_run_start
from tests.judging.conftest import openai_judge
from webhooks import sending
from webhooks.models import Delivery, Subscription

REFUSED = [
    "127.0.0.1", "10.0.0.1", "172.16.5.4", "192.168.1.1", "169.254.169.254", "100.64.0.1",
    "0.0.0.0", "224.0.0.1", "::1", "::ffff:127.0.0.1", "fe80::1%eth0", "fc00::1", "::",
]  # fmt: skip
ALLOWED = ["8.8.8.8", "1.1.1.1", "2001:4860:4860::8888"]


@pytest.fixture
def private_refused(settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = False


@pytest.mark.parametrize("address", REFUSED)
def test_private_loopback_and_reserved_addresses_are_refused(private_refused, address):
    assert address_refusal(address) is not None


@pytest.mark.parametrize("address", ALLOWED)
def test_public_addresses_are_allowed(private_refused, address):
    assert address_refusal(address) is None


def test_the_operator_may_allow_private_addresses(settings):
    settings.ARBITER_ALLOW_PRIVATE_ADDRESSES = True
    assert address_refusal("127.0.0.1") is None and address_refusal("10.0.0.1") is None


@pytest.mark.django_db(transaction=True)  # the run starts once its row is committed
@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
def test_a_judge_on_a_private_address_is_refused_once_and_reaches_no_server(
    fake_llm, pairs_task, tasks_in_process, private_refused, host
):
    judge = openai_judge(fake_llm)
    connection = judge.connection
    connection.base_url = connection.base_url.replace("127.0.0.1", host)
    connection.save(update_fields=["base_url"])
    run = judge_run_start(judge, pairs_task.project, samples=1)
    run.refresh_from_db()
    assert fake_llm.requests == []
    assert run.status == JudgeRun.Status.FINISHED  # every trial answered, with its error
    errors = set(judge.verdicts.values_list("error", flat=True))
    assert errors == {
        "the provider's address is private or local, which this server does not allow"
    }


@pytest.mark.django_db
def test_a_webhook_to_a_private_address_is_not_sent(site, receiver, private_refused):
    subscription = Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["pair.decided"]
    )
    delivery = Delivery.objects.create(
        subscription=subscription,
        kind="pair.decided",
        payload={"event": "pair.decided"},
        next_attempt_at=timezone.now(),
    )
    assert sending.delivery_attempt(delivery_id=delivery.pk) == "pending"
    delivery.refresh_from_db()
    assert receiver.requests == []
    assert delivery.last_error == sending.PRIVATE_ADDRESS and delivery.last_status_code is None


def test_an_outbound_call_runs_from_synchronous_code_inside_a_running_loop():
    # A webhook sent by synchronous code that an event loop called (as in the browser tests,
    # whose thread runs Playwright's loop): asyncio.run alone would refuse.
    async def answer():
        return 42

    async def caller():
        return run_blocking(answer())

    assert run_blocking(answer()) == 42
    assert asyncio.run(caller()) == 42
