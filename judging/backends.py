"""How each judge backend is called: one HTTP attempt, no retries (judging/retry.py owns those).

`openai`: OpenAI-compatible chat completions (OpenAI, vLLM, Ollama, LM Studio, Gemini's
compatible endpoint), images as base64 data URLs. `anthropic`: the Messages API, images as
base64 sources. `always-a` and `random` need no network (demo, tests, baselines).
"""

import hashlib
import json
import os
from dataclasses import dataclass
from email.utils import parsedate_to_datetime
from http import HTTPStatus

import aiohttp
from django.utils import timezone
from django.utils.translation import gettext

from core.outbound import refused_address
from judging.models import (
    API_BACKENDS,
    POINTWISE_SCALES,
    Judge,
    PromptTemplateAnswerFormat,
)
from judging.prompts import EncodedImage, Message
from judging.sampling import request_sampling
from judging.selectors import connection_allows

ANTHROPIC_VERSION = "2023-06-01"
# A reply larger than this is refused unread: judges answer in a few kilobytes.
MAX_REPLY_BYTES = 10 * 1024 * 1024
_RETRYABLE_STATUS = {408, 409, 425, 429, 500, 502, 503, 504, 529}
_OVERLOADED_STATUS = {429, 529}  # rate limited; Anthropic's "overloaded"


@dataclass(frozen=True)
class Reply:
    text: str
    input_tokens: int | None = None
    output_tokens: int | None = None


class CallFailed(Exception):
    """One attempt failed. `retryable` failures (429, 5xx, timeouts, connection errors) may
    be tried again, after `retry_after` seconds when the server said so. `overloaded` ones
    (429, 529, an `overloaded_error` body) also shrink the judge's concurrency
    (judging/rate_limits.py)."""

    def __init__(
        self,
        message: str,
        *,
        retryable: bool,
        retry_after: float | None = None,
        overloaded: bool = False,
    ):
        super().__init__(message)
        self.retryable = retryable
        self.retry_after = retry_after
        self.overloaded = overloaded


class ConfigurationError(Exception):
    """The judge cannot be called at all (e.g. its API key variable is not set)."""


def api_key(judge: Judge) -> str | None:
    """The key of the judge's connection, from the server variable the operator named."""
    connection = judge.connection
    if connection is None or not connection.api_key_env:
        return None
    key = os.environ.get(connection.api_key_env)
    if not key:
        # The lead reading this never sees the variable's name (it is the operator's).
        raise ConfigurationError(
            gettext("connection %(name)s has no key configured on the server; ask the operator")
            % {"name": repr(connection.name)}
        )
    return key


def connection_url(judge: Judge) -> str:
    """The base URL of the judge's connection (check_callable made sure an API judge has one)."""
    if judge.connection is None:
        raise ConfigurationError(f"judge {judge.name!r} has no connection")
    return judge.connection.base_url.rstrip("/")


def check_callable(judge: Judge, project) -> None:
    """Raise ConfigurationError now rather than fail every call of a run."""
    if judge.project_id is not None and judge.project_id != project.pk:
        raise ConfigurationError(
            gettext("judge %(name)s belongs to another project") % {"name": repr(judge.name)}
        )
    if judge.backend in API_BACKENDS:
        if judge.connection is None or not connection_allows(judge.connection, project):
            raise ConfigurationError(
                gettext("judge %(name)s: its connection is not allowed for this project")
                % {"name": repr(judge.name)}
            )
        if not judge.model:
            raise ConfigurationError(
                gettext("judge %(name)s needs a model name") % {"name": repr(judge.name)}
            )
        api_key(judge)
    elif judge.backend == Judge.Backend.EXTERNAL:
        raise ConfigurationError(
            gettext("judge %(name)s is external: import its predictions with import_verdicts")
            % {"name": repr(judge.name)}
        )


def _retry_after(headers) -> float | None:
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(float(value), 0.0)
    except ValueError:
        pass
    try:
        return max((parsedate_to_datetime(value) - timezone.now()).total_seconds(), 0.0)
    except (TypeError, ValueError):
        return None


def _status_text(status: int) -> str:
    """The status and its standard phrase; never the server's words (an error is shown to
    leads and must not carry a reply's body)."""
    try:
        return f"HTTP {status} {HTTPStatus(status).phrase}"
    except ValueError:
        return f"HTTP {status}"


def checked_json(status: int, headers, text: str) -> dict:
    if status >= 300:  # redirects are not followed: a judge calls its connection's URL only
        raise CallFailed(
            _status_text(status),
            retryable=status in _RETRYABLE_STATUS,
            retry_after=_retry_after(headers),
            overloaded=status in _OVERLOADED_STATUS,
        )
    try:
        body = json.loads(text)
    except ValueError:
        raise CallFailed(f"{_status_text(status)}: the body is not JSON", retryable=False) from None
    if not isinstance(body, dict):
        raise CallFailed("the answer body is not a JSON object", retryable=False)
    return body


async def read_bounded(stream, limit: int = MAX_REPLY_BYTES) -> bytes:
    chunks, size = [], 0
    while chunk := await stream.read(64 * 1024):
        size += len(chunk)
        if size > limit:
            raise CallFailed(f"the reply is larger than {limit} bytes", retryable=False)
        chunks.append(chunk)
    return b"".join(chunks)


async def _post(session: aiohttp.ClientSession, url: str, headers: dict, body: dict) -> dict:
    """One attempt. The session's total timeout bounds it, connection and body included."""
    try:
        async with session.post(url, headers=headers, json=body, allow_redirects=False) as response:
            raw = await read_bounded(response.content)
            # JSON is UTF-8 (RFC 8259); a charset the server names is not trusted.
            return checked_json(response.status, response.headers, raw.decode(errors="replace"))
    except TimeoutError:
        raise CallFailed("timed out", retryable=True) from None
    except aiohttp.ClientError as error:
        raise connection_failure(error) from None


def connection_failure(error: aiohttp.ClientError) -> CallFailed:
    """A failed connection as the run records it: the exception's class only (its text can
    quote what the server sent); a refused private address is not retried (core/outbound.py)."""
    if refused_address(error):
        return CallFailed(
            "the provider's address is private or local, which this server does not allow",
            retryable=False,
        )
    return CallFailed(f"connection failed: {type(error).__name__}", retryable=True)


def _data_url(media_type: str, encoded: str) -> str:
    return f"data:{media_type};base64,{encoded}"


def openai_request(judge: Judge, message: Message[EncodedImage], sample: int) -> tuple[dict, dict]:
    """The headers and body of a chat completion (live, or one line of a batch)."""
    content: list[dict] = []
    for _kind, value in message.parts:
        if isinstance(value, str):  # a text; an image is an EncodedImage
            content.append({"type": "text", "text": value})
        else:
            content.append({"type": "image_url", "image_url": {"url": _data_url(*value)}})
    body = {
        **request_sampling("openai", judge.model, judge.sampling, sample),
        "model": judge.model,
        "messages": [{"role": "user", "content": content}],
    }
    return openai_headers(judge), body


def openai_headers(judge: Judge) -> dict:
    key = api_key(judge)
    return {"Authorization": f"Bearer {key}"} if key else {}


def openai_reply(answer: dict) -> Reply:
    """The judge's words in a chat completion's body."""
    try:
        reply = answer["choices"][0]["message"]["content"]
    except (KeyError, IndexError, TypeError):
        raise CallFailed("no choices[0].message.content in the answer", retryable=False) from None
    if isinstance(reply, list):  # some servers answer with content parts
        reply = "".join(str(p.get("text") or "") for p in reply if isinstance(p, dict))
    usage = answer.get("usage") or {}
    if not isinstance(usage, dict):
        usage = {}
    return Reply(
        str(reply or ""), _count(usage.get("prompt_tokens")), _count(usage.get("completion_tokens"))
    )


def _count(value) -> int | None:
    """A token count as the API gave it; anything but a small non-negative integer is unknown."""
    if isinstance(value, int) and not isinstance(value, bool) and 0 <= value < 2**31:
        return value
    return None


async def call_openai(client, judge: Judge, message: Message[EncodedImage], sample: int) -> Reply:
    headers, body = openai_request(judge, message, sample)
    url = connection_url(judge) + "/chat/completions"
    return openai_reply(await _post(client, url, headers, body))


def anthropic_headers(judge: Judge) -> dict:
    headers = {"anthropic-version": ANTHROPIC_VERSION}
    if key := api_key(judge):
        headers["x-api-key"] = key
    return headers


def anthropic_request(
    judge: Judge, message: Message[EncodedImage], sample: int
) -> tuple[dict, dict]:
    """The headers and body of a Messages call (live, or one request of a batch)."""
    content: list[dict] = []
    for _kind, value in message.parts:
        if isinstance(value, str):  # a text; an image is an EncodedImage
            content.append({"type": "text", "text": value})
        else:
            media_type, encoded = value
            source = {"type": "base64", "media_type": media_type, "data": encoded}
            content.append({"type": "image", "source": source})
    body = {
        **request_sampling("anthropic", judge.model, judge.sampling, sample),
        "model": judge.model,
        "messages": [{"role": "user", "content": content}],
    }
    return anthropic_headers(judge), body


def anthropic_reply(answer: dict) -> Reply:
    """The judge's words in a Messages answer's body."""
    error = answer.get("error") if answer.get("type") == "error" else None
    if isinstance(error, dict) and error.get("type") == "overloaded_error":
        # Anthropic may say so with a 200 (its streams do): as a 529.
        raise CallFailed("overloaded (overloaded_error)", retryable=True, overloaded=True)
    blocks = answer.get("content")
    if not isinstance(blocks, list):
        raise CallFailed("no content blocks in the answer", retryable=False)
    text = "".join(
        str(b.get("text", "")) for b in blocks if isinstance(b, dict) and b.get("type") == "text"
    )
    usage = answer.get("usage") or {}
    if not isinstance(usage, dict):
        usage = {}
    return Reply(text, _count(usage.get("input_tokens")), _count(usage.get("output_tokens")))


async def call_anthropic(
    client, judge: Judge, message: Message[EncodedImage], sample: int
) -> Reply:
    headers, body = anthropic_request(judge, message, sample)
    url = connection_url(judge) + "/v1/messages"
    return anthropic_reply(await _post(client, url, headers, body))


def baseline_reply(judge: Judge, trial_key: str, answer_format: str = "json") -> Reply:
    """always-a answers with the response shown first; random flips a coin seeded by the
    judge's seed and the trial, so a rerun gives the same answers (a pointwise template: a
    seeded score on its scale). Each in the words the template's answer format expects."""
    seed = (judge.sampling or {}).get("seed", 0)
    digest = hashlib.sha256(f"{seed}:{trial_key}".encode()).digest()
    if answer_format in POINTWISE_SCALES:
        if judge.backend == Judge.Backend.ALWAYS_A:
            raise ConfigurationError("always-a is a pairwise baseline; it cannot score alone")
        low, high = POINTWISE_SCALES[answer_format]
        return Reply(f"SCORE: {low + int.from_bytes(digest[:4]) % (high - low + 1)}")
    first = judge.backend == Judge.Backend.ALWAYS_A or digest[0] % 2 == 0
    if answer_format == PromptTemplateAnswerFormat.MJBENCH:
        return Reply(f"BETTER IMAGE: {1 if first else 2}")
    return Reply('{"better_response": "%s"}' % ("A" if first else "B"))


async def call_backend(
    client,
    judge: Judge,
    message: Message[EncodedImage],
    sample: int,
    trial_key: str,
    answer_format="json",
):
    if judge.backend == Judge.Backend.OPENAI:
        return await call_openai(client, judge, message, sample)
    if judge.backend == Judge.Backend.ANTHROPIC:
        return await call_anthropic(client, judge, message, sample)
    if judge.backend in (Judge.Backend.ALWAYS_A, Judge.Backend.RANDOM):
        return baseline_reply(judge, trial_key, answer_format)
    raise ConfigurationError(f"judge {judge.name!r} has no callable backend ({judge.backend})")
