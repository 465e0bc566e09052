"""A small OpenAI-compatible (and Anthropic-compatible) HTTP server for tests, benchmarks and
offline demos: it answers chat completions and messages after a configurable latency, can be
told to misbehave (429 with Retry-After, 500, hang, garbage, an injected verdict), and records
what it received. It also implements the two batch APIs (OpenAI's files and /v1/batches,
Anthropic's /v1/messages/batches) with the same answers.

    python -m devtools.fake_llm --port 8099 --latency 0.2
    python manage.py connection_add fake --backend openai \
        --base-url http://127.0.0.1:8099/v1 --all-projects
    python manage.py judge_add fake --project demo --connection fake --model fake
"""

import argparse
import asyncio
import email.parser
import email.policy
import json
import threading
import time
from collections import deque
from dataclasses import dataclass, field


@dataclass
class Behaviour:
    """What to do with one request. kind: answer | status | hang | garbage | text."""

    kind: str = "answer"
    status: int = 200
    headers: dict = field(default_factory=dict)
    text: str = ""


def answer(side: str = "A") -> Behaviour:
    return Behaviour("answer", text=side)


def status(code: int, **headers) -> Behaviour:
    return Behaviour(
        "status", status=code, headers={k.replace("_", "-"): v for k, v in headers.items()}
    )


def hang() -> Behaviour:
    return Behaviour("hang")


def garbage() -> Behaviour:
    return Behaviour("garbage")


def text(content: str) -> Behaviour:
    return Behaviour("text", text=content)


class FakeLLMServer:
    """Start with `start()` (returns the base URL ending in /v1), stop with `stop()`.
    `script` holds behaviours for the next requests, in order; after it runs out every
    request gets `default`. `requests` records the JSON bodies received."""

    def __init__(
        self,
        latency: float = 0.0,
        default: Behaviour | None = None,
        decide=None,
        record=True,
        score=None,
        capacity: int | None = None,
        batch_seconds: float = 0.0,
    ):
        self.latency = latency
        self.record = record  # False: count requests but keep no bodies (long benchmarks)
        self.default = default or answer("A")
        # decide(request JSON) -> "A" | "B": the side an `answer` behaviour names, when set.
        self.decide = decide
        # score(request JSON) -> number: when set, an `answer` is a pointwise judge's
        # "SCORE: n" instead of a side.
        self.score = score
        # A hidden capacity: a request arriving while this many are being answered gets an
        # immediate 429 (a provider's rate limit), counted in `refused`.
        self.capacity = capacity
        self.answering = 0
        self.refused = 0
        # The batch APIs (OpenAI files + /batches, Anthropic /v1/messages/batches): a batch
        # ends this many seconds after it was created; its answers are decided at creation,
        # one behaviour per request, as live answers are.
        self.batch_seconds = batch_seconds
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict] = {}
        self.batch_requests: list[dict] = []  # every request body received inside a batch
        self.script: deque[Behaviour] = deque()
        self.requests: list[dict] = []
        self.paths: list[str] = []
        self.headers: list[dict] = []
        self.served = 0
        self.in_flight = 0
        self.max_in_flight = 0
        self.started_at: list[float] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._server = None
        self._thread: threading.Thread | None = None
        self.port = 0

    # -- control ---------------------------------------------------------------------------
    def start(self, port: int = 0) -> str:
        ready = threading.Event()

        def serve():
            self._loop = asyncio.new_event_loop()
            asyncio.set_event_loop(self._loop)
            self._server = self._loop.run_until_complete(
                asyncio.start_server(self._handle, "127.0.0.1", port, backlog=1024)
            )
            self.port = self._server.sockets[0].getsockname()[1]
            ready.set()
            self._loop.run_forever()

        self._thread = threading.Thread(target=serve, daemon=True, name="fake-llm")
        self._thread.start()
        ready.wait(10)
        return self.base_url

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    def stop(self) -> None:
        if self._loop is None:
            return

        async def shutdown():
            self._server.close()
            for task in asyncio.all_tasks():
                if task is not asyncio.current_task():
                    task.cancel()

        asyncio.run_coroutine_threadsafe(shutdown(), self._loop).result(10)
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)

    def queue(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.script.extend(behaviours)

    def _next(self) -> Behaviour:
        with self._lock:
            return self.script.popleft() if self.script else self.default

    # -- HTTP ------------------------------------------------------------------------------
    async def _handle(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter):
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                lines = head.decode("latin-1").split("\r\n")
                _method, path, _version = lines[0].split(" ", 2)
                headers = {}
                for line in lines[1:]:
                    if ":" in line:
                        key, value = line.split(":", 1)
                        headers[key.strip().lower()] = value.strip()
                body = await reader.readexactly(int(headers.get("content-length", 0)))
                if _method == "GET" and path == "/stats":  # for benchmarks in another process
                    stats = {"served": self.served, "refused": self.refused}
                    code, extra, payload = 200, {}, json.dumps(stats).encode()
                elif _is_batch_api(_method, path):
                    code, extra, payload = self._batch_api(_method, path, headers, body)
                else:
                    code, extra, payload = await self._respond(path, headers, body)
                reason = {200: "OK", 429: "Too Many Requests"}.get(code, "Status")
                out = [f"HTTP/1.1 {code} {reason}", f"Content-Length: {len(payload)}"]
                out += ["Content-Type: application/json", "Connection: keep-alive"]
                out += [f"{k}: {v}" for k, v in extra.items()]
                writer.write(("\r\n".join(out) + "\r\n\r\n").encode() + payload)
                await writer.drain()
        except (asyncio.IncompleteReadError, ConnectionError, asyncio.CancelledError):
            pass
        finally:
            writer.close()

    async def _respond(self, path: str, headers: dict, body: bytes):
        behaviour = self._next()
        try:
            request = json.loads(body or b"{}")
        except ValueError:
            request = {"unparseable": body[:200].decode("latin-1")}
        with self._lock:
            self.served += 1
            if self.record:
                self.requests.append(request)
                self.paths.append(path)
                self.headers.append(headers)
                self.started_at.append(time.monotonic())
            self.in_flight += 1
            self.max_in_flight = max(self.max_in_flight, self.in_flight)
        if self.capacity is not None:
            with self._lock:
                over = self.answering >= self.capacity
                self.refused += over
                self.answering += not over
            if over:
                with self._lock:
                    self.in_flight -= 1
                error = {"error": {"message": "fake capacity exceeded", "type": "rate_limit"}}
                return 429, {}, json.dumps(error).encode()
        try:
            if behaviour.kind == "hang":
                await asyncio.sleep(3600)
            if self.latency:
                await asyncio.sleep(self.latency)
            if behaviour.kind == "status":
                error = {"error": {"message": f"fake {behaviour.status}"}}
                return behaviour.status, behaviour.headers, json.dumps(error).encode()
            if behaviour.kind == "garbage":
                return 200, {}, b"<html>this is not JSON</html>"
            return 200, {}, self._completion(path, request, self._content(behaviour, request))
        finally:
            with self._lock:
                self.in_flight -= 1
                if self.capacity is not None:
                    self.answering -= 1

    # -- batch APIs ------------------------------------------------------------------------
    def _batch_api(self, method: str, path: str, headers: dict, body: bytes):
        with self._lock:
            self.paths.append(f"{method} {path}")
        parts = path.rstrip("/").split("/")
        if method == "POST" and path == "/v1/files":
            return self._file_upload(headers, body)
        if method == "GET" and path.startswith("/v1/files/") and path.endswith("/content"):
            content = self.files.get(parts[3])
            return (200, {}, content) if content is not None else _not_found()
        if method == "POST" and path in ("/v1/batches", "/v1/messages/batches"):
            return self._batch_create(path, body)
        batch = self.batches.get(parts[-1] if parts[-1] not in ("results", "cancel") else parts[-2])
        if batch is None:
            return _not_found()
        if method == "POST" and parts[-1] == "cancel":
            self._batch_cancel(batch)
        self._batch_advance(batch)
        if parts[-1] == "results":
            return 200, {}, batch["results"] if batch["ended"] else b""
        return 200, {}, json.dumps(batch["view"]).encode()

    def _file_upload(self, headers: dict, body: bytes):
        message = email.parser.BytesParser(policy=email.policy.HTTP).parsebytes(
            b"Content-Type: " + headers.get("content-type", "").encode() + b"\r\n\r\n" + body
        )
        uploaded = next(
            (part.get_payload(decode=True) for part in message.iter_parts() if part.get_filename()),
            None,
        )
        if uploaded is None:
            return 400, {}, json.dumps({"error": {"message": "no file"}}).encode()
        file_id = f"file-{len(self.files) + 1}"
        self.files[file_id] = uploaded
        return 200, {}, json.dumps({"id": file_id, "object": "file", "purpose": "batch"}).encode()

    def _batch_create(self, path: str, body: bytes):
        anthropic = path.startswith("/v1/messages")
        try:
            request = json.loads(body)
            if anthropic:
                items = [(r["custom_id"], r["params"]) for r in request["requests"]]
            else:
                lines = self.files[request["input_file_id"]].splitlines()
                items = [(line["custom_id"], line["body"]) for line in map(json.loads, lines)]
        except (ValueError, KeyError, TypeError):
            return 400, {}, json.dumps({"error": {"message": "bad batch"}}).encode()
        answers = []
        for custom_id, params in items:
            with self._lock:
                self.batch_requests.append(params)
            answers.append(self._batch_answer(anthropic, custom_id, params, self._next()))
        number = len(self.batches) + 1
        batch_id = f"msgbatch_{number}" if anthropic else f"batch_{number}"
        results = b"".join(json.dumps(a).encode() + b"\n" for a in answers)
        view = (
            {"id": batch_id, "type": "message_batch", "processing_status": "in_progress"}
            if anthropic
            else {"id": batch_id, "object": "batch", "status": "in_progress"}
        )
        self.batches[batch_id] = {
            "anthropic": anthropic,
            "ends_at": time.monotonic() + self.batch_seconds,
            "ended": False,
            "results": results,
            "view": view,
        }
        return 200, {}, json.dumps(view).encode()

    def _batch_cancel(self, batch: dict) -> None:
        """A batch cancelled before it ended: no request of it is answered."""
        if batch["ended"]:
            return
        batch["ends_at"] = 0
        if batch["anthropic"]:
            lines = [json.loads(line) for line in batch["results"].splitlines()]
            batch["results"] = b"".join(
                json.dumps(
                    {"custom_id": line["custom_id"], "result": {"type": "canceled"}}
                ).encode()
                + b"\n"
                for line in lines
            )
        else:
            batch["results"] = b""
            batch["cancelled"] = True

    def _batch_advance(self, batch: dict) -> None:
        if batch["ended"] or time.monotonic() < batch["ends_at"]:
            return
        batch["ended"] = True
        if batch["anthropic"]:
            batch["view"]["processing_status"] = "ended"
            return
        if batch.get("cancelled"):
            batch["view"].update(status="cancelled")
            return
        file_id = f"file-out-{batch['view']['id']}"
        self.files[file_id] = batch["results"]
        batch["view"].update(status="completed", output_file_id=file_id)

    def _batch_answer(self, anthropic: bool, custom_id: str, params: dict, behaviour) -> dict:
        path = "/v1/messages" if anthropic else "/v1/chat/completions"
        if behaviour.kind in ("status", "hang", "garbage"):
            if anthropic:
                error = {"type": "error", "error": {"type": "api_error", "message": "fake"}}
                return {"custom_id": custom_id, "result": {"type": "errored", "error": error}}
            code = behaviour.status if behaviour.kind == "status" else 500
            response = {"status_code": code, "body": {"error": {"message": "fake"}}}
            return {"custom_id": custom_id, "response": response, "error": None}
        content = self._content(behaviour, params)
        completion = json.loads(self._completion(path, params, content))
        if anthropic:
            return {"custom_id": custom_id, "result": {"type": "succeeded", "message": completion}}
        response = {"status_code": 200, "body": completion}
        return {"custom_id": custom_id, "response": response, "error": None}

    def _content(self, behaviour: Behaviour, request: dict) -> str:
        """The words of an `answer` or `text` behaviour (live and batch alike)."""
        if behaviour.kind == "text":
            return behaviour.text
        if self.score is not None:
            return f"A fake assessment.\nSCORE: {self.score(request)}"
        side = self.decide(request) if self.decide else behaviour.text
        return json.dumps({"analysis": {"overall": "fake"}, "better_response": side})

    @staticmethod
    def _completion(path: str, request: dict, content: str) -> bytes:
        if path.endswith("/messages"):  # Anthropic
            answer_body = {
                "type": "message",
                "role": "assistant",
                "content": [{"type": "text", "text": content}],
                "usage": {"input_tokens": 100, "output_tokens": 20},
            }
        else:
            answer_body = {
                "object": "chat.completion",
                "model": request.get("model", "fake"),
                "choices": [{"index": 0, "message": {"role": "assistant", "content": content}}],
                "usage": {"prompt_tokens": 100, "completion_tokens": 20},
            }
        return json.dumps(answer_body).encode()


def _is_batch_api(method: str, path: str) -> bool:
    return path.startswith(("/v1/files", "/v1/batches", "/v1/messages/batches"))


def _not_found():
    return 404, {}, json.dumps({"error": {"message": "not found"}}).encode()


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--port", type=int, default=8099)
    parser.add_argument("--latency", type=float, default=0.2)
    parser.add_argument("--answer", default="A", help="the side every answer names")
    parser.add_argument("--record", action="store_true", help="keep every request in memory")
    parser.add_argument(
        "--capacity", type=int, help="answer 429 to requests above this many at once"
    )
    parser.add_argument(
        "--batch-seconds", type=float, default=5.0, help="a batch ends this long after creation"
    )
    options = parser.parse_args()
    server = FakeLLMServer(
        latency=options.latency,
        default=answer(options.answer),
        record=options.record,
        capacity=options.capacity,
        batch_seconds=options.batch_seconds,
    )
    print(f"fake judge API at {server.start(options.port)} (Ctrl-C stops)", flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        server.stop()


if __name__ == "__main__":
    main()
