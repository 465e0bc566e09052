"""PostgreSQL restarts are survived without restarting the web process: a connection killed
under the app is replaced before a request uses it (CONN_HEALTH_CHECKS), and while the
database cannot be reached pages answer a short 503, never a 500 (core/unavailable.py)."""

import psycopg
import pytest
from django.core.handlers.wsgi import WSGIHandler
from django.db import OperationalError, connection
from django.db.backends.postgresql.base import DatabaseWrapper
from django.test import Client, RequestFactory
from django.urls import reverse

from projects.models import Membership
from tests.factories import member, queued_pairs

pytestmark = [pytest.mark.postgres, pytest.mark.django_db(transaction=True)]


def _terminate(pids: list[int]) -> int:
    """What a PostgreSQL restart does to the app's connections (pg_terminate_backend)."""
    settings = connection.settings_dict
    with psycopg.connect(
        host=settings["HOST"], port=settings["PORT"] or 5432, user=settings["USER"],
        dbname="postgres", autocommit=True,
    ) as admin:  # fmt: skip
        rows = admin.execute(
            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY(%s)", [pids]
        ).fetchall()
    return sum(1 for (done,) in rows if done)


@pytest.fixture
def lead_client(tmp_path):
    task = queued_pairs(tmp_path, count=3)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    client = Client(raise_request_exception=False)
    client.force_login(lead)
    return client, task.project


def test_requests_work_again_right_after_the_apps_connections_were_killed(lead_client):
    """Through Django's real WSGI handler (the test client skips the per-request connection
    upkeep): the kept connection dies under the process, as in a database restart."""
    client, project = lead_client
    request = RequestFactory().get(
        reverse("dash-overview", args=[project.slug]),
        HTTP_COOKIE=f"sessionid={client.cookies['sessionid'].value}",
    )
    handler = WSGIHandler()

    def status() -> int:
        answer = {}
        body = handler(dict(request.environ), lambda code, headers: answer.update(code=code))
        b"".join(body)
        body.close()  # request_finished: the connection is kept (CONN_MAX_AGE), not closed
        return int(answer["code"].split()[0])

    assert status() == 200
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        (kept,) = cursor.fetchone()
    assert _terminate([kept]) == 1
    assert [status() for _ in range(3)] == [200, 200, 200]


def test_pages_answer_503_while_the_database_is_down_and_200_once_it_is_back(
    lead_client, monkeypatch
):
    client, project = lead_client
    url = reverse("dash-overview", args=[project.slug])

    def refused(self, conn_params):
        raise OperationalError("connection refused (the test's stand-in for a database down)")

    monkeypatch.setattr(DatabaseWrapper, "get_new_connection", refused)
    connection.close()
    page = client.get(url)
    assert page.status_code == 503 and page["Retry-After"] == "10"
    assert "The database cannot be reached right now" in page.content.decode()
    api = client.get("/api/projects/")
    assert api.status_code == 503 and "cannot be reached" in api.json()["detail"]
    monkeypatch.undo()
    assert client.get(url).status_code == 200


def test_any_other_error_is_still_a_500(lead_client, monkeypatch):
    client, project = lead_client

    def broken(project):
        raise RuntimeError("a bug")

    monkeypatch.setattr("dashboards.views.overview", broken)
    page = client.get(reverse("dash-overview", args=[project.slug]))
    assert page.status_code == 500
