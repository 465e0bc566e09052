"""Property-based run of every operation of the OpenAPI schema (schemathesis, in-process): no
server error, every status code declared, every response body as the schema says.

Each case is sent as the lead or as an annotator of `alpha` (drawn per case), and most of its
ids, slugs, names and hashes are real ones of the `world` fixture, of both projects, read
after the fixture is built (PostgreSQL does not restart its ids between tests): generated
ids rarely exist, and a run of 404s would not reach the code. The token endpoint is fuzzed
too, with real credentials in most cases and the login limits out of the way. Bounded and
reproducible: MAX_EXAMPLES per operation, positive and negative data, derandomized; the
counts (operations, requests, statuses) are printed at the end of the module."""

import itertools
from collections import Counter

import pytest
import schemathesis
from django.core.signals import request_finished, request_started
from django.db import close_old_connections
from hypothesis import HealthCheck, settings
from hypothesis import strategies as st
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    response_schema_conformance,
    status_code_conformance,
)

from annotation.models import Assignment, Rating
from annotation.services.assignments import assignment_claim
from api.views.auth import TokenLoginThrottle
from config.wsgi import application
from content.models import Asset
from exports.jobs import export_job_start
from exports.models import ExportJob
from judging.models import Judge, JudgeRun, PromptTemplate, Verdict
from projects.models import Membership, Task
from projects.services import member_add_limits
from tests.api.conftest import PASSWORD, token_header

CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]
MAX_EXAMPLES = 25

# Loaded at collection: the schema view needs no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)

# Real values of the current test's world, by kind (filled by `_real_values`): the hook
# below draws from them while the test runs.
REAL: dict[str, list] = {}
CALLERS: list[dict] = []
COUNTS = {"requests": Counter(), "operations": set()}
TURNS = itertools.count()


def _collection(path: str) -> str:
    """The collection an `{id}` of this path names, the part before it:
    `/api/projects/{project}/exports/{id}/` names an export job, `/api/runs/{id}/progress/`
    a run, `/api/projects/{project}/leases/{id}/release/` a pair in progress."""
    parts = path.strip("/").split("/")
    return parts[parts.index("{id}") - 1] if "{id}" in parts else parts[1]


def _choices(key: str, value, path: str) -> list:
    """Real values for a generated one, in its type (an id in a path is a string or an
    integer as the schema says; a task or judge in a body an id or a name)."""
    if key == "id":
        key = f"id:{_collection(path)}"
    elif key in ("task", "judge") and isinstance(value, str):
        key = f"{key}:name"
    values = REAL.get(key, [])
    if isinstance(value, str):
        return [str(real) for real in values]
    if isinstance(value, int) and not isinstance(value, bool):
        return [real for real in values if isinstance(real, int)]
    return []


def _pointed(values, path: str) -> dict:
    if not isinstance(values, dict):
        return {}
    strategies = {}
    for key, value in values.items():
        choices = _choices(key, value, path)
        if choices:
            strategies[key] = st.sampled_from(choices)
    return strategies


@schema.hook
def flatmap_case(context, case):
    """Three cases in four point at real objects; each case is sent by one of the callers."""
    path = case.operation.path
    parts = [
        (case.path_parameters, _pointed(case.path_parameters, path)),
        (case.query, _pointed(case.query, path)),
        (case.body, _pointed(case.body, path)),
    ]

    def point(drawn):
        caller, real, values = drawn
        case.headers = {**(case.headers or {}), **caller}
        if real:
            for (target, _), chosen in zip(parts, values, strict=True):
                if chosen:
                    target.update(chosen)
        return case

    return st.tuples(
        st.sampled_from(CALLERS),
        st.integers(0, 3).map(bool),
        st.tuples(*(st.fixed_dictionaries(strategies) for _, strategies in parts)),
    ).map(point)


def _point_a_coverage_case(case, turn: int) -> None:
    """The coverage phase (boundary values of each parameter, deterministic) builds its cases
    without the hook and with an empty `Authorization`: its cases take turns between the
    callers, and three in four have real path ids (their queries and bodies stay as the phase
    made them)."""
    case.headers = {**(case.headers or {}), **CALLERS[turn % len(CALLERS)]}
    if turn % 4 == 0:
        return
    for key, value in (case.path_parameters or {}).items():
        choices = _choices(key, value, case.operation.path)
        if choices:
            case.path_parameters[key] = choices[turn % len(choices)]


@pytest.fixture(autouse=True)
def _keep_the_test_connection():
    """The real WSGI handler closes the database connection after each request; Django's test
    client switches that off and so must this in-process run, or PostgreSQL loses the test's
    transaction (SQLite's in-memory test database ignores the close)."""
    request_started.disconnect(close_old_connections)
    request_finished.disconnect(close_old_connections)
    yield
    request_started.connect(close_old_connections)
    request_finished.connect(close_old_connections)


@pytest.fixture(autouse=True)
def _no_login_limits(settings, monkeypatch):
    """The token endpoint answers every case instead of a 429 after the first few."""
    settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT = 10**9
    settings.ARBITER_LOGIN_FAILURES_PER_ADDRESS = 10**9
    monkeypatch.setattr(TokenLoginThrottle, "THROTTLE_RATES", {"token-login": "1000000/s"})
    # Member additions too: answered at once and never limited.
    monkeypatch.setattr(member_add_limits, "ADD_SECONDS", 0.0)
    monkeypatch.setattr(member_add_limits, "ADDS_PER_HOUR", 10**9)


@pytest.fixture(autouse=True)
def _real_values(world):
    """REAL and CALLERS for this test's world: both projects' objects, an export job of each
    project (queued: it runs after a commit that a test never makes) and a pair in progress
    in each."""
    for project in (world.alpha, world.beta):
        export_job_start(project, world.lead_a if project == world.alpha else world.lead_b)
    assignment_claim(world.ann_a, world.alpha_task)
    assignment_claim(world.ann_b, world.beta_task)
    tasks = Task.objects.all()
    pairs = [*world.alpha_task.pairs.all()[:4], *world.beta_task.pairs.all()[:3]]
    REAL.clear()
    REAL.update(
        {
            "project": ["alpha", "beta", str(world.alpha.pk), str(world.beta.pk)],
            "task": list(tasks.values_list("pk", flat=True)),
            "task:name": list(tasks.values_list("slug", flat=True)),
            "judge": list(Judge.objects.values_list("pk", flat=True)),
            "judge:name": list(Judge.objects.values_list("name", flat=True)),
            "pair": [pair.pk for pair in pairs],
            "sha256": list(Asset.objects.values_list("sha256", flat=True)[:6]),
            "username": ["lead_a", "ann_a", "lead_b"],
            "identifier": ["ann_b", "outsider", "nobody", "lead_b"],
            "password": [PASSWORD],
        }
    )
    for name, model in (
        ("tasks", Task),
        ("pairs", None),
        ("assignments", Assignment),
        ("ratings", Rating),
        ("judges", Judge),
        ("runs", JudgeRun),
        ("verdicts", Verdict),
        ("templates", PromptTemplate),
        ("exports", ExportJob),
        ("members", Membership),
    ):
        ids = REAL["pair"] if model is None else model.objects.values_list("pk", flat=True)[:8]
        REAL[f"id:{name}"] = list(ids)
    leased = Assignment.objects.filter(status=Assignment.Status.LEASED)
    REAL["id:leases"] = list(leased.values_list("pk", flat=True))
    CALLERS[:] = [token_header(world.lead_a), token_header(world.ann_a)]


@pytest.fixture(scope="module", autouse=True)
def _report_counts(request):
    yield
    plugins = request.config.pluginmanager
    reporter, capture = plugins.get_plugin("terminalreporter"), plugins.get_plugin("capturemanager")
    requests = COUNTS["requests"]
    if reporter is None or capture is None or not requests:
        return
    statuses = ", ".join(f"{code}: {n}" for code, n in sorted(requests.items()))
    with capture.global_and_fixture_disabled():
        reporter.write_line(
            f"\nschema fuzz: {len(COUNTS['operations'])} operations, "
            f"{sum(requests.values())} requests ({statuses})"
        )


@schema.parametrize()
@settings(
    max_examples=MAX_EXAMPLES,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms(case):
    if not str((case.headers or {}).get("Authorization", "")).startswith("Token "):
        _point_a_coverage_case(case, next(TURNS))
    response = case.call_and_validate(checks=CHECKS)
    COUNTS["operations"].add(f"{case.operation.method.upper()} {case.operation.path}")
    COUNTS["requests"][response.status_code] += 1
