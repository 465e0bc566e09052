"""The two providers' batch APIs, as HTTP: submit a job of requests, ask how it is going,
read its answers. OpenAI: upload a JSONL file (`/files`, purpose "batch"), then `/batches`;
answers in the batch's output and error files. Anthropic: `/v1/messages/batches` with the
requests inline; answers at `/v1/messages/batches/{id}/results`.

Only the connection's own base URL is ever called: ids the provider returns are checked
against a strict pattern before they go into a path, and a `results_url` it names is not
followed (the documented path is built instead). Bodies are read with a bound.
"""

import json
import re
from dataclasses import dataclass

import aiohttp

from judging.backends import (
    MAX_REPLY_BYTES,
    CallFailed,
    Reply,
    anthropic_headers,
    anthropic_reply,
    checked_json,
    connection_failure,
    connection_url,
    openai_headers,
    openai_reply,
    read_bounded,
)
from judging.models import Judge

MAX_RESULTS_BYTES = 512 * 1024 * 1024  # one batch's answers: a few KB per request
_PROVIDER_ID = re.compile(r"[A-Za-z0-9_-]{1,200}")
_OPENAI_ENDED = {"completed", "failed", "expired", "cancelled"}
# What the providers say a batch is doing; anything else is shown as "other" (a provider's
# words are never shown).
KNOWN_STATUSES = _OPENAI_ENDED | {
    "validating", "in_progress", "finalizing", "cancelling", "canceling", "ended",
}  # fmt: skip
_OPENAI_ENDPOINT = "/v1/chat/completions"


@dataclass(frozen=True)
class BatchState:
    provider_status: str
    ended: bool
    output_files: tuple[str, ...] = ()  # OpenAI: the output and error files, when there are


def _status(value) -> str:
    return value if value in KNOWN_STATUSES else "other"


def _checked_id(value, what: str) -> str:
    if not isinstance(value, str) or not _PROVIDER_ID.fullmatch(value):
        raise CallFailed(f"the provider's {what} is not a plain id", retryable=False)
    return value


async def _request(session, method: str, url: str, headers: dict, *, limit=None, **body) -> bytes:
    try:
        async with session.request(
            method, url, headers=headers, allow_redirects=False, **body
        ) as response:
            raw = await read_bounded(response.content, limit or MAX_RESULTS_BYTES)
            if response.status >= 300:
                checked_json(response.status, response.headers, "")  # raises with the status
            return raw
    except TimeoutError:
        raise CallFailed("timed out", retryable=True) from None
    except aiohttp.ClientError as error:
        raise connection_failure(error) from None


async def _json(session, method: str, url: str, headers: dict, **body) -> dict:
    raw = await _request(session, method, url, headers, limit=1024 * 1024, **body)
    return checked_json(200, {}, raw.decode(errors="replace"))


def openai_line(custom_id: str, body: dict) -> bytes:
    """One request of an OpenAI batch input file."""
    line = {"custom_id": custom_id, "method": "POST", "url": _OPENAI_ENDPOINT, "body": body}
    return json.dumps(line, separators=(",", ":")).encode() + b"\n"


def anthropic_line(custom_id: str, body: dict) -> bytes:
    """One request of an Anthropic Message Batch (the requests array, one item per line)."""
    return json.dumps({"custom_id": custom_id, "params": body}, separators=(",", ":")).encode()


async def submit(session, judge: Judge, lines: list[bytes]) -> str:
    """Send the requests (lines made by openai_line / anthropic_line); the provider's id."""
    base = connection_url(judge)
    if judge.backend == Judge.Backend.OPENAI:
        form = aiohttp.FormData()
        form.add_field("purpose", "batch")
        form.add_field(
            "file",
            b"".join(lines),
            filename="arbiter-batch.jsonl",
            content_type="application/jsonl",
        )
        uploaded = await _json(session, "POST", f"{base}/files", openai_headers(judge), data=form)
        file_id = _checked_id(uploaded.get("id"), "file id")
        body = {"input_file_id": file_id, "endpoint": _OPENAI_ENDPOINT, "completion_window": "24h"}
        created = await _json(session, "POST", f"{base}/batches", openai_headers(judge), json=body)
        return _checked_id(created.get("id"), "batch id")
    payload = b'{"requests":[' + b",".join(lines) + b"]}"
    headers = {**anthropic_headers(judge), "content-type": "application/json"}
    created = await _json(session, "POST", f"{base}/v1/messages/batches", headers, data=payload)
    return _checked_id(created.get("id"), "batch id")


async def state(session, judge: Judge, provider_id: str) -> BatchState:
    base, provider_id = connection_url(judge), _checked_id(provider_id, "batch id")
    if judge.backend == Judge.Backend.OPENAI:
        body = await _json(session, "GET", f"{base}/batches/{provider_id}", openai_headers(judge))
        status = _status(body.get("status"))
        files = tuple(
            _checked_id(body[name], "file id")
            for name in ("output_file_id", "error_file_id")
            if body.get(name)
        )
        return BatchState(status, status in _OPENAI_ENDED, files)
    url = f"{base}/v1/messages/batches/{provider_id}"
    body = await _json(session, "GET", url, anthropic_headers(judge))
    status = _status(body.get("processing_status"))
    return BatchState(status, status == "ended")


async def results(session, judge: Judge, provider_id: str, batch: BatchState, wanted) -> dict:
    """custom_id -> Reply, or the error text of a request that got no answer, for the ids in
    `wanted` (those the batch sent; any other line is dropped unread)."""
    base = connection_url(judge)
    if judge.backend == Judge.Backend.OPENAI:
        found = {}
        for file_id in batch.output_files:
            url = f"{base}/files/{file_id}/content"
            raw = await _request(session, "GET", url, openai_headers(judge))
            found.update(_read_lines(raw, _openai_result, wanted))
        return found
    url = f"{base}/v1/messages/batches/{_checked_id(provider_id, 'batch id')}/results"
    raw = await _request(session, "GET", url, anthropic_headers(judge))
    return _read_lines(raw, _anthropic_result, wanted)


async def cancel(session, judge: Judge, provider_id: str) -> None:
    base, provider_id = connection_url(judge), _checked_id(provider_id, "batch id")
    if judge.backend == Judge.Backend.OPENAI:
        await _json(session, "POST", f"{base}/batches/{provider_id}/cancel", openai_headers(judge))
    else:
        url = f"{base}/v1/messages/batches/{provider_id}/cancel"
        await _json(session, "POST", url, anthropic_headers(judge))


def _read_lines(raw: bytes, read_one, wanted) -> dict:
    """Each JSONL line's custom_id and answer, for the ids wanted; a line that is too long,
    not a JSON object or without a wanted custom_id is skipped (its request then counts as
    unanswered)."""
    found = {}
    for line in raw.splitlines():
        if len(line) > MAX_REPLY_BYTES:
            continue
        try:
            item = json.loads(line)
        except (ValueError, RecursionError):  # RecursionError: absurdly nested JSON
            continue
        if not isinstance(item, dict) or item.get("custom_id") not in wanted:
            continue
        try:
            found[item["custom_id"]] = read_one(item)
        except CallFailed as failure:
            found[item["custom_id"]] = str(failure)
        except (TypeError, AttributeError, ValueError):  # a shape no API answers with
            found[item["custom_id"]] = "the answer has an unexpected shape"
    return found


def _openai_result(item: dict) -> Reply | str:
    response = item.get("response")
    if not isinstance(response, dict):
        return "the batch has no answer for this request"
    code = response.get("status_code")
    if code != 200:
        return f"HTTP {code}" if isinstance(code, int) else "no answer"
    body = response.get("body")
    if not isinstance(body, dict):
        return "the answer body is not a JSON object"
    return openai_reply(body)


def _anthropic_result(item: dict) -> Reply | str:
    result = item.get("result")
    if not isinstance(result, dict):
        return "the batch has no answer for this request"
    kind = result.get("type")
    if kind != "succeeded":
        return (
            f"batch request {kind}" if kind in ("errored", "canceled", "expired") else "no answer"
        )
    message = result.get("message")
    if not isinstance(message, dict):
        return "the answer is not a message"
    return anthropic_reply(message)
