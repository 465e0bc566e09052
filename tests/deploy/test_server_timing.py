"""Server-Timing (core/server_timing.py): off by default, the time inside Django when on."""

import re

import pytest
from django.test import Client, override_settings

pytestmark = pytest.mark.django_db


def test_no_server_timing_unless_the_operator_asks():
    assert "Server-Timing" not in Client().get("/healthz")


def test_server_timing_reports_the_time_inside_django():
    with override_settings(ARBITER_SERVER_TIMING=True):  # read when the handler is built
        response = Client().get("/accounts/login/")
    found = re.fullmatch(r"app;dur=([0-9]+\.[0-9])", response["Server-Timing"])
    assert found and 0 < float(found.group(1)) < 60_000
