"""Prompt templates (versions, markers, message building) and the retry policy."""

import asyncio
import random

import pytest

from judging.backends import CallFailed, Reply
from judging.models import Judge, PromptTemplate
from judging.prompts import TemplateInvalid, build_message, template_for, template_save
from judging.retry import RetryPolicy, call_with_retries


@pytest.mark.django_db
def test_editing_a_template_makes_a_new_version_and_same_text_does_not():
    body = "Compare {prompt} then {first} and {second}."
    first = template_save("house", body, "json")
    again = template_save("house", body, "json")
    edited = template_save("house", body + " Be strict.", "json")
    assert (first.version, again.pk, edited.version) == (1, first.pk, 2)
    assert PromptTemplate.objects.filter(name="house").count() == 2


@pytest.mark.django_db
@pytest.mark.parametrize(
    "body", ["no markers", "{prompt} {first}", "{prompt} {first} {second} {second}"]
)
def test_a_template_needs_each_marker_once(body):
    with pytest.raises(TemplateInvalid):
        template_save("broken", body, "json")
    assert not PromptTemplate.objects.exists()


@pytest.mark.django_db
def test_judges_use_the_built_in_template_of_the_kind_unless_they_name_one():
    judge = Judge.objects.create(name="j", backend="always-a", templates={"t2i": "mjbench-t2i"})
    assert template_for(judge, "t2i").name == "mjbench-t2i"
    assert template_for(judge, "t2i").answer_format == "mjbench"
    edit = template_for(judge, "edit")
    assert (edit.name, edit.version, edit.answer_format) == ("mmrb2-edit", 1, "json")
    assert "better_response" in edit.body and "instruction" in edit.body
    judge.templates = {"t2i": "missing"}
    with pytest.raises(TemplateInvalid, match="missing"):
        template_for(judge, "t2i")


def test_build_message_interleaves_text_and_images_in_order():
    image = ("image", ("image/png", b"png-bytes"))
    message = build_message(
        "P: {prompt}\nFirst: {first}\nSecond: {second}\nDone.",
        [("text", "draw a cat")],
        [("text", "here:"), image],
        [image, ("text", "tail")],
    )
    assert message.parts == [
        ("text", "P: draw a cat\nFirst: here:"),
        image,
        ("text", "\nSecond: "),
        image,
        ("text", "tail\nDone."),
    ]


def test_backoff_is_capped_exponential_with_jitter_and_honours_retry_after():
    policy = RetryPolicy(base_seconds=0.5, cap_seconds=4)
    rng = random.Random(1)
    for attempt in range(10):
        delay = policy.delay(attempt, None, rng)
        assert 0 <= delay <= min(4, 0.5 * 2**attempt)
    assert 7 <= policy.delay(0, 7, rng) <= 7.5
    assert policy.delay(0, 10_000, rng) <= policy.max_retry_after + 0.5


def _flaky(failures):
    calls = []

    async def attempt():
        calls.append(1)
        if failures:
            raise failures.pop(0)
        return Reply('{"better_response": "A"}')

    return attempt, calls


def test_retryable_failures_are_retried_until_an_answer():
    slept = []

    async def sleep(seconds):
        slept.append(seconds)

    attempt, calls = _flaky(
        [CallFailed("429", retryable=True, retry_after=2), CallFailed("500", retryable=True)]
    )
    outcome = asyncio.run(call_with_retries(attempt, RetryPolicy(), sleep=sleep))
    assert outcome.reply is not None and outcome.attempts == 3 and len(calls) == 3
    assert slept[0] >= 2  # Retry-After honoured


def test_a_non_retryable_failure_is_final_at_once():
    attempt, calls = _flaky([CallFailed("HTTP 400: bad request", retryable=False)])
    outcome = asyncio.run(call_with_retries(attempt, RetryPolicy()))
    assert (outcome.reply, len(calls)) == (None, 1)
    assert "400" in outcome.error


def test_retries_stop_after_the_last_attempt():
    async def sleep(seconds):
        pass

    attempt, calls = _flaky([CallFailed("timed out", retryable=True) for _ in range(10)])
    outcome = asyncio.run(call_with_retries(attempt, RetryPolicy(max_attempts=4), sleep=sleep))
    assert outcome.reply is None and len(calls) == 4
    assert "gave up after 4 attempts" in outcome.error
