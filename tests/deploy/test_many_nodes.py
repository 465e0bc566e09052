"""Several nodes on one PostgreSQL, one Redis and one object store: two gunicorn web nodes and
two Celery workers, each a separate process with its own empty local folder (no shared disk).
30 annotators rate at once (half through each web node) while a judge run (against the fake
provider) and an export run; a third worker joins during the judge run and the first one is
stopped (SIGTERM, as `docker compose up --scale worker=N` or a node's shutdown does). Then:
no rating or verdict lost or duplicated, every image served by either web node, the export
downloadable from either, and no media file on any node's own disk. The figures are printed
(also without -s, and in the terminal summary under pytest-xdist). No beat process: nothing
here is periodic, and a deployment runs exactly one (docs/operators.md, "Several nodes")."""

import io
import json
import signal
import threading
import time
import zipfile

import pytest
from django.contrib.auth.hashers import PBKDF2PasswordHasher
from django.contrib.auth.models import User
from django.db.models import Count

from annotation.models import Rating
from config.object_storage import media_storage
from content.models import Asset
from devtools.fake_llm import FakeLLMServer
from judging.models import JudgeRun, JudgeRunChunk, Verdict
from judging.services import runs
from judging.services.runs import judge_run_start
from projects.models import Membership
from tests.deploy.nodes import (
    Session,
    node_env,
    stop,
    web_node,
    web_ready,
    worker_node,
    worker_ready,
)
from tests.factories import member, queued_pairs
from tests.judging.conftest import openai_judge
from tests.object_store import bucket_create, running_s3_server, s3_env
from tests.waiting import wait_until

pytestmark = [
    pytest.mark.postgres,
    pytest.mark.redis,
    pytest.mark.worker,
    pytest.mark.django_db(transaction=True),
]

PAIRS = 60
ANNOTATORS = 30
RATINGS_EACH = 4  # 120 ratings of 60 pairs × 3
PASSWORD = "pw-annotate-1"
CHUNK_PAIRS = 5  # twelve chunks: enough to spread over the workers and outlive one of them


@pytest.fixture
def object_store(settings):
    """The S3_* environment of every node: moto's S3 server and a bucket of their own. This
    process (which imports the pairs) writes there too, as the operator's S3_* would make it."""
    with running_s3_server() as endpoint:
        bucket_create(endpoint, "arbiter-nodes")
        env = s3_env(endpoint, "arbiter-nodes", prefix="arbiter")
        settings.STORAGES = {**settings.STORAGES, "default": media_storage(env)}
        yield env


class Annotator(threading.Thread):
    """Signs in through its web node, then rates RATINGS_EACH pairs the way the page does
    (POST next/, follow to the pair, submit with htmx)."""

    def __init__(self, username: str, port: int, start: threading.Event):
        super().__init__(name=username, daemon=True)
        self.username, self.session, self.start_event = username, Session(port), start
        self.submitted = 0
        self.errors: list[str] = []

    def run(self):
        try:
            self.session.login(self.username, PASSWORD)
            self.start_event.wait()
            status, headers, _ = self.session.request("POST", "/projects/ann/tasks/t2i/next/")
            page = headers.get("Location") if status == 302 else None
            while page and page.startswith("/annotate/") and self.submitted < RATINGS_EACH:
                assert self.session.request("GET", page)[0] == 200, page
                form = {"action": "submit", "overall": "5", "rationale": "", "active_seconds": "9"}
                status, headers, body = self.session.request(
                    "POST", page, form, headers={"HX-Request": "true"}
                )
                assert status == 200, (page, status, body[:300])
                self.submitted += 1
                page = headers.get("HX-Push-Url")
        except Exception as error:  # reported by the test with the annotator's name
            self.errors.append(f"{self.username}: {error!r}")


def test_two_web_nodes_and_changing_workers_lose_and_duplicate_nothing(
    tmp_path, monkeypatch, object_store, capsys, record_property
):
    from config.celery import app

    began = time.monotonic()
    app.control.purge()
    monkeypatch.setattr(runs, "MAX_CHUNK_PAIRS", CHUNK_PAIRS)
    task = queued_pairs(tmp_path, count=PAIRS, annotators_per_pair=3)
    project = task.project
    member("lead", project, role=Membership.Role.LEAD, password=PASSWORD)
    names = [member(f"expert{n:02}", project).username for n in range(ANNOTATORS)]
    # The suite hashes with MD5 for speed, which the nodes (default hashers) do not accept:
    # one hash of their default kind for every account.
    User.objects.update(password=PBKDF2PasswordHasher().encode(PASSWORD, "manynodes"))
    # Slow while the workers change (a chunk takes 2.5 s), then quick to the end.
    provider = FakeLLMServer(latency=0.5, record=False)
    provider.start()
    judge = openai_judge(provider, concurrency=2)

    ports = {"web1": _free_port(), "web2": _free_port()}
    nodes, logs = {}, {}

    def start(name: str):
        logs[name] = tmp_path / f"{name}.log"
        env = node_env(tmp_path / name, object_store)
        if name in ports:
            nodes[name] = web_node(env, ports[name], logs[name])
        else:
            nodes[name] = worker_node(env, name, logs[name])

    try:
        for name in ("web1", "web2", "worker1", "worker2"):
            start(name)
        for name in ("web1", "web2"):
            wait_until(lambda n=name: web_ready(ports[n]), 90, f"{name} to answer", [logs[name]])
        for name in ("worker1", "worker2"):
            wait_until(lambda n=name: worker_ready(logs[n]), 90, f"{name}", [logs[name]])

        go = threading.Event()
        annotators = [
            Annotator(name, ports["web1" if n % 2 else "web2"], go) for n, name in enumerate(names)
        ]
        for annotator in annotators:
            annotator.start()
        lead = Session(ports["web1"])
        lead.login("lead", PASSWORD)

        # All at once: the ratings, the judge run, the export (started through web1's API).
        ready = time.monotonic()
        go.set()
        run = judge_run_start(judge, project)
        status, _, body = lead.request("POST", "/api/projects/ann/exports/", {"format": "jsonl"})
        assert status == 202, body[:300]
        export = json.loads(body)

        # A worker joins once the run is under way, and the first one leaves.
        wait_until(
            lambda: JudgeRunChunk.objects.filter(run=run, done=True).exists(),
            60, "a first chunk", [logs["worker1"], logs["worker2"]],
        )  # fmt: skip
        start("worker3")
        wait_until(lambda: worker_ready(logs["worker3"]), 90, "worker3", [logs["worker3"]])
        removed_status = stop(nodes.pop("worker1"), signal.SIGTERM, seconds=60)
        provider.latency = 0.1

        wait_until(
            lambda: JudgeRun.objects.get(pk=run.pk).status == JudgeRun.Status.FINISHED,
            120, "the judge run", [logs[n] for n in ("worker2", "worker3", "worker1")],
        )  # fmt: skip
        for annotator in annotators:
            annotator.join(timeout=120)
        detail = f"/api/projects/ann/exports/{export['id']}/"

        def export_done():
            return json.loads(lead.on(ports["web2"]).request("GET", detail)[2])["status"] in (
                "done",
                "failed",
            )

        wait_until(export_done, 120, "the export", [logs["worker2"], logs["worker3"]])
        worked = time.monotonic()

        # Every image, through either web node.
        shas = list(Asset.objects.values_list("sha256", flat=True))
        served = {}
        for name in ("web1", "web2"):
            session = lead.on(ports[name])
            bodies = [session.request("GET", f"/assets/{sha}") for sha in shas]
            served[name] = [body for status, _, body in bodies if status == 200 and body]
        downloads = {
            name: lead.on(ports[name]).request("GET", f"{detail}download/") for name in ports
        }
    finally:
        for process in nodes.values():
            stop(process)
        provider.stop()

    errors = [error for annotator in annotators for error in annotator.errors]
    submitted = sum(annotator.submitted for annotator in annotators)
    ratings = Rating.objects.filter(pair__project=project)
    twice = ratings.values("pair", "annotator").annotate(n=Count("id")).filter(n__gt=1).count()
    verdicts = Verdict.objects.filter(judge=judge)
    per_trial = verdicts.values("pair", "order", "sample").annotate(n=Count("id"))
    chunks_by = {
        name: logs[name].read_text().count(f"run {run.pk} chunk ")
        for name in ("worker1", "worker2", "worker3")
    }
    zips = {name: body for name, (status, _, body) in downloads.items() if status == 200}
    # Nothing on any node's own disk: every image and the export went through the store.
    local = [path for path in tmp_path.glob("*/media/**/*") if path.is_file()]
    figures = {
        "ratings submitted (HTTP 200)": submitted,
        "ratings stored": ratings.count(),
        "ratings lost": submitted - ratings.count(),
        "ratings duplicated": twice,
        "verdicts expected": PAIRS * 2,
        "verdicts stored": verdicts.count(),
        "verdicts lost": PAIRS * 2 - verdicts.exclude(choice__isnull=True).count(),
        "verdicts duplicated": sum(row["n"] - 1 for row in per_trial),
        "chunks run by worker1 / worker2 / worker3": list(chunks_by.values()),
        "worker1 exit status after SIGTERM": removed_status,
        "images": len(shas),
        "images served by web1": len(served["web1"]),
        "images served by web2": len(served["web2"]),
        "export downloaded from": sorted(zips),
        "media files on the nodes' own disks": len(local),
        "seconds: data and nodes up / ratings, judge run and export": [
            round(ready - began, 1),
            round(worked - ready, 1),
        ],
    }
    record_property("figures", figures)  # the terminal summary prints them (conftest.py)
    with capsys.disabled():
        print("\nmany nodes:", json.dumps(figures, indent=1))
    assert not errors, errors[:5]
    assert submitted == ANNOTATORS * RATINGS_EACH
    assert figures["ratings lost"] == 0 and twice == 0
    assert figures["verdicts lost"] == 0 and figures["verdicts duplicated"] == 0
    assert verdicts.count() == PAIRS * 2
    assert removed_status == 0 and chunks_by["worker1"] >= 1 and chunks_by["worker3"] >= 1
    assert len(shas) == 2 * PAIRS and served["web1"] == served["web2"]
    assert len(served["web1"]) == len(shas)  # every one, the same bytes from either node
    assert sorted(zips) == ["web1", "web2"] and zips["web1"] == zips["web2"]
    assert local == []
    with zipfile.ZipFile(io.BytesIO(zips["web1"])) as archive:
        assert archive.testzip() is None and archive.namelist()


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
