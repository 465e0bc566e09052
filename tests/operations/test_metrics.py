"""/metrics: Prometheus's text for operators only (a superuser's session or API token);
request latencies, and each judge's trials by outcome (operations/prometheus.py)."""

import pytest
from django.contrib.auth.models import User

from judging.models import Judge
from judging.services.runs import judge_run_start
from projects.models import Membership
from tests.factories import api_key, member, queued_pairs

pytestmark = pytest.mark.django_db


@pytest.mark.django_db(transaction=True)  # the run's writer thread commits its verdicts
def test_an_operator_reads_latencies_and_each_judges_trials(client, tmp_path, tasks_in_process):
    task = queued_pairs(tmp_path, count=4)
    judge_run_start(Judge.objects.create(name="coin", backend="random"), task.project)
    operator = User.objects.create_superuser("operator", password="pw-operator-1")
    client.force_login(operator)
    client.get("/readyz")  # a request for the latency histogram
    answer = client.get("/metrics")
    assert answer.status_code == 200 and answer["Content-Type"].startswith("text/plain")
    text = answer.content.decode()
    assert "django_http_requests_latency_seconds_by_view_method" in text
    trials = {
        line.split(" ")[0]: float(line.split(" ")[1])
        for line in text.splitlines()
        if line.startswith('arbiter_judge_trials_total{judge="coin"')
    }
    counted = sum(v for k, v in trials.items() if 'outcome="cached"' not in k)
    assert counted == 4 * 2  # every trial of the run, in exactly one outcome


def test_an_operators_api_token_reads_them_too(client):
    operator = User.objects.create_superuser("operator", password="pw-operator-1")
    key = api_key(operator, access="read")
    answer = client.get("/metrics", HTTP_AUTHORIZATION=f"Token {key}")
    assert answer.status_code == 200


def test_an_operators_token_for_one_project_or_a_revoked_one_does_not(client, tmp_path):
    operator = User.objects.create_superuser("operator", password="pw-operator-1")
    project = queued_pairs(tmp_path, count=1).project
    one_project = api_key(operator, project=project)
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Token {one_project}").status_code == 404
    revoked = api_key(operator)
    operator.set_password("pw-operator-2")
    operator.save()  # a password change revokes every token
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Token {revoked}").status_code == 404


def test_anyone_else_gets_the_404_of_a_missing_page(client, tmp_path):
    task = queued_pairs(tmp_path, count=1)
    lead = member("lead", task.project, role=Membership.Role.LEAD)
    missing = client.get("/no-such-page").status_code
    assert client.get("/metrics").status_code == missing == 404
    key = api_key(lead)
    assert client.get("/metrics", HTTP_AUTHORIZATION=f"Token {key}").status_code == 404
    assert client.get("/metrics", HTTP_AUTHORIZATION="Token not-a-token").status_code == 404
    client.force_login(lead)
    assert client.get("/metrics").status_code == 404
