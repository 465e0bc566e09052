"""Every retry Arbiter makes is declared in core/outbound.py: a judge's call waits and gives up
as JUDGE_CALL_RETRIES says, a webhook delivery as webhook_delivery_retries says."""

import asyncio
import random
from datetime import timedelta

import pytest
from django.core.exceptions import ImproperlyConfigured
from django.utils import timezone

from core.outbound import JUDGE_CALL_RETRIES, RetryPolicy, webhook_delivery_retries
from judging import runner
from judging.backends import CallFailed
from judging.retry import call_with_retries
from webhooks.models import Delivery, Subscription
from webhooks.sending import delivery_attempt


def test_a_judges_call_is_retried_as_the_declared_policy_says():
    assert runner.RETRY_POLICY is JUDGE_CALL_RETRIES
    slept: list[float] = []

    async def sleep(seconds):
        slept.append(seconds)

    async def attempt():
        raise CallFailed("HTTP 503", retryable=True)

    outcome = asyncio.run(
        call_with_retries(attempt, JUDGE_CALL_RETRIES, rng=random.Random(7), sleep=sleep)
    )
    assert outcome.attempts == JUDGE_CALL_RETRIES.max_attempts
    expected = random.Random(7)
    assert slept == [
        JUDGE_CALL_RETRIES.wait_seconds(number, None, expected)
        for number in range(JUDGE_CALL_RETRIES.max_attempts - 1)
    ]


def test_a_schedule_gives_its_waits_and_repeats_the_last():
    policy = RetryPolicy(max_attempts=4, schedule=(60, 300))
    assert [policy.wait_seconds(n) for n in range(4)] == [60, 300, 300, 300]
    assert [policy.last(n) for n in (1, 3, 4)] == [False, False, True]
    assert policy.wait_seconds(0, retry_after=10, rng=random.Random(1)) >= 10


@pytest.mark.django_db
def test_a_webhook_delivery_is_retried_as_the_declared_policy_says(site, receiver, settings):
    settings.ARBITER_WEBHOOK_RETRY_SECONDS = ["60", "300"]
    policy = webhook_delivery_retries()
    assert (policy.max_attempts, policy.schedule) == (3, (60, 300))
    receiver.statuses = [500] * 10
    subscription = Subscription.objects.create(
        project=site.project, destination=site.destination, kinds=["pair.decided"]
    )
    now = timezone.now()
    delivery = Delivery.objects.create(
        subscription=subscription, kind="pair.decided", payload={}, next_attempt_at=now
    )
    for attempt in range(policy.max_attempts):
        status = delivery_attempt(delivery_id=delivery.pk, now=now)
        delivery.refresh_from_db()
        assert delivery.attempts == attempt + 1
        if policy.last(delivery.attempts):
            assert (status, delivery.next_attempt_at) == ("failed", None)
        else:
            assert status == "pending"
            wait = timedelta(seconds=policy.wait_seconds(attempt))
            assert delivery.next_attempt_at == now + wait
            now = delivery.next_attempt_at
    assert len(receiver.requests) == policy.max_attempts


def test_a_wrong_webhook_schedule_is_named(settings):
    settings.ARBITER_WEBHOOK_RETRY_SECONDS = ["60", "soon"]
    with pytest.raises(ImproperlyConfigured, match="ARBITER_WEBHOOK_RETRY_SECONDS"):
        webhook_delivery_retries()
