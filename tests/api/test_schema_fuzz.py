"""Property-based run of every operation of the OpenAPI schema (schemathesis, in-process),
as a lead and as an annotator: no server error, every status code declared, every response
body as the schema says. Bounded: 20 examples per operation and mode, reproducible."""

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

from config.wsgi import application
from tests.api.conftest import token_header

CHECKS = [not_a_server_error, status_code_conformance, response_schema_conformance]

# Loaded at collection: the schema view needs no database.
schema = schemathesis.openapi.from_wsgi("/api/schema/", application)

# Values naming objects of the `world` fixture: generated ids and slugs rarely exist, so half
# the cases are pointed at real ones (of the caller's project and of the other one).
_REAL = {
    "project": ["alpha", "beta", "1", "2"],
    "id": [str(number) for number in range(1, 13)],
    "task": ["t2i", "edit"],
    "judge": [1, 2, 3],
    "pair": [1, 2, 7],
}


def _real_values(values: dict | None, names) -> dict:
    if not isinstance(values, dict):
        return {}
    return {
        name: st.sampled_from(_REAL[name])
        for name in names
        if name in values and name in _REAL and type(values[name]) is type(_REAL[name][0])
    }


@schema.hook
def flatmap_case(context, case):
    path = _real_values(case.path_parameters, ["project", "id"])
    query = _real_values(case.query, ["project", "task", "judge", "pair"])
    body = _real_values(case.body, ["project", "task", "judge"])
    if not (path or query or body):
        return st.just(case)

    def point(drawn):
        real, path_values, query_values, body_values = drawn
        if real:
            case.path_parameters.update(path_values)
            if query_values:
                case.query.update(query_values)
            if body_values:
                case.body.update(body_values)
        return case

    return st.tuples(
        st.booleans(),
        st.fixed_dictionaries(path),
        st.fixed_dictionaries(query),
        st.fixed_dictionaries(body),
    ).map(point)


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


@pytest.fixture(params=["lead", "annotator"])
def caller(request, world) -> dict:
    """The token of a lead (of `alpha`) or of an annotator (of `alpha`)."""
    return token_header(world.lead_a if request.param == "lead" else world.ann_a)


@schema.parametrize()
@settings(
    max_examples=20,
    deadline=None,
    derandomize=True,
    database=None,
    suppress_health_check=list(HealthCheck),
)
def test_every_operation_conforms(case, caller):
    case.call_and_validate(headers=caller, checks=CHECKS)
