"""Projects, tasks and the report (exports: test_exports.py)."""

import json

from django.contrib.auth.models import User

from metrics.report import project_report
from tests.api.conftest import token_client


def test_members_see_their_projects_and_leads_their_settings(world, as_lead, as_annotator):
    lead = as_lead.get("/api/projects/").json()
    assert [p["slug"] for p in lead["results"]] == ["alpha"]
    assert lead["results"][0]["role"] == "lead"
    assert lead["results"][0]["settings"]["annotators_per_pair"] == 3
    annotator = as_annotator.get("/api/projects/").json()
    assert annotator["results"][0]["role"] == "annotator"
    assert annotator["results"][0]["settings"] is None
    by_slug = as_annotator.get("/api/projects/alpha/").json()
    assert by_slug == as_annotator.get(f"/api/projects/{world.alpha.pk}/").json()
    assert as_annotator.get("/api/projects/beta/").status_code == 404


def test_superusers_see_every_project(world):
    admin = User.objects.create_superuser("root", password="pw-root-12345")
    client = token_client(admin)
    listed = client.get("/api/projects/").json()
    assert [p["slug"] for p in listed["results"]] == ["alpha", "beta"]
    assert all(p["role"] == "lead" and p["settings"] for p in listed["results"])
    assert client.get("/api/projects/beta/report/").status_code == 200
    assert client.get("/api/pairs/").json()["count"] == 10


def test_tasks_list_per_project(world, as_lead):
    listed = as_lead.get(f"/api/tasks/?project={world.alpha.pk}").json()
    assert [(t["project_slug"], t["slug"]) for t in listed["results"]] == [("alpha", "t2i")]
    assert as_lead.get("/api/tasks/?project=beta").json()["count"] == 0
    detail = as_lead.get(f"/api/tasks/{world.alpha_task.pk}/").json()
    assert detail["kind"] == "t2i" and detail["aspects"][0]["key"] == "faithfulness"


def test_lists_are_paged(world, as_lead):
    first = as_lead.get("/api/verdicts/?page_size=5").json()
    assert first["count"] == 12 and len(first["results"]) == 5
    assert "page=2" in first["next"] and first["previous"] is None
    last = as_lead.get("/api/verdicts/?page_size=5&page=3").json()
    assert len(last["results"]) == 2 and last["next"] is None
    assert len(as_lead.get("/api/verdicts/?page_size=100000").json()["results"]) == 12
    assert as_lead.get("/api/verdicts/?page=99").status_code == 404
    assert as_lead.get("/api/verdicts/?page_size=oops").status_code == 400  # not ignored


def test_the_report_is_project_report(world, as_lead, as_annotator):
    answer = as_lead.get("/api/projects/alpha/report/")
    assert answer.status_code == 200
    assert answer.json() == json.loads(json.dumps(project_report(world.alpha)))
    assert set(answer.json()["tasks"]) == {"t2i"}
    assert as_annotator.get("/api/projects/alpha/report/").status_code == 404
    assert as_lead.get("/api/projects/beta/report/").status_code == 404
