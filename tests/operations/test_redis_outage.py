"""Redis is an accelerator: with the cache's Redis down, pages answer and sign-ins stay
limited (core/cache.py). A Redis server of the test's own, on its own port, is stopped and
started again."""

import logging
import time

import pytest
from django.contrib.auth.models import User
from django.test import Client
from django.urls import reverse

from core import cache as fallback_cache
from projects.models import Membership
from tests.dashboards.conftest import rated  # noqa: F401
from tests.factories import member, queued_pairs
from tests.operations.conftest import OwnRedis, celery_broker
from tests.waiting import wait_until

pytestmark = [pytest.mark.redis, pytest.mark.django_db]

PASSWORD = "pw-outage-1"


@pytest.fixture
def own_redis(settings, monkeypatch):
    server = OwnRedis()
    server.start()
    monkeypatch.setattr(fallback_cache, "RETRY_SECONDS", 0.2)
    settings.CACHES = {
        "default": {
            "BACKEND": "core.cache.FallbackRedisCache",
            "LOCATION": f"redis://127.0.0.1:{server.port}/0",
            "OPTIONS": {"socket_connect_timeout": 0.5, "socket_timeout": 1.0},
        }
    }
    yield server
    if server.process.poll() is None:
        server.stop()


def _sign_in(username, password):
    client = Client()
    answer = client.post("/accounts/login/", {"username": username, "password": password})
    return answer, "_auth_user_id" in client.session


def test_pages_answer_and_sign_ins_stay_limited_while_the_caches_redis_is_down(
    own_redis, settings, tmp_path, caplog
):
    settings.ARBITER_LOGIN_FAILURES_PER_ACCOUNT = 3
    task = queued_pairs(tmp_path, count=3)
    member("lead", task.project, role=Membership.Role.LEAD, password=PASSWORD)
    User.objects.create_user("expert", password=PASSWORD)
    for _ in range(3):  # counted in Redis
        assert _sign_in("expert", "guess")[1] is False
    assert _sign_in("expert", PASSWORD)[1] is False  # refused while Redis holds the count

    own_redis.stop()
    caplog.set_level(logging.ERROR, logger="core.cache")
    client = Client()
    assert client.get("/accounts/login/").status_code == 200
    answer = client.post("/accounts/login/", {"username": "lead", "password": PASSWORD})
    assert answer.status_code == 302  # a sign-in works
    for name in ("dash-overview", "dash-agreement", "dash-judges", "dash-models"):
        assert client.get(reverse(name, args=[task.project.slug])).status_code == 200, name
    for _ in range(3):  # counted in this process's memory now
        _sign_in("someone", "guess")
    assert _sign_in("someone", "guess")[0].status_code == 200
    refused, _ = _sign_in("someone", "guess")
    assert "Too many failed sign-ins" in refused.content.decode()
    faults = [r for r in caplog.records if "Redis unreachable" in r.getMessage()]
    assert len(faults) == 1  # logged once, not per operation

    from django.core.cache import cache

    own_redis.start()  # an empty Redis: the limits count there again, once the cache tries it
    wait_until(  # the cache's retry window (RETRY_SECONDS, 0.2 s here) ends
        lambda: time.monotonic() >= cache._down_until, 5, "the retry window", every=0.02
    )
    for _ in range(3):
        _sign_in("third", "guess")
    assert _sign_in("third", PASSWORD)[1] is False
    assert any(b"login-failures" in key for key in cache._cache.get_client().keys("*"))


def test_every_lead_page_answers_with_the_cache_and_the_broker_down(
    own_redis,
    rated,  # noqa: F811 (the fixture, imported above)
    settings,
    client,
):
    """The full stack's Redis is both: with it gone, no page of a lead is a 500."""
    from django.contrib.auth.models import Permission

    from judging.models import Judge
    from tests.pages.browsing import lead_pages

    project, lead = rated
    Judge.objects.create(name="local-coin", backend="random", project=project)
    lead.user_permissions.add(Permission.objects.get(codename="add_project"))
    own_redis.stop()
    settings.CELERY_TASK_ALWAYS_EAGER = False
    with celery_broker(f"redis://127.0.0.1:{own_redis.port}/0"):
        client.force_login(lead)
        answers = {name: client.get(path).status_code for name, path in lead_pages(project)}
        started = client.post(reverse("dash-export-start", args=[project.slug]))
    assert {name: code for name, code in answers.items() if code != 200} == {}
    assert started.status_code == 302  # accepted: it waits for a worker
