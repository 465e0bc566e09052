"""Nobody reaches what is not theirs by guessing ids.

As an annotator of `alpha`, as an outsider (no membership) and as the lead of `beta`, every
object endpoint is walked over every id from 3 below the smallest that exists to 3 above the
largest (on PostgreSQL, ids below the smallest belong to earlier tests' rolled-back rows, none
of which exists: walking them all took minutes and tested what NOWHERE tests): an id outside
the caller's scope answers exactly like an id that does not exist (404; 403 everywhere on
the global judge endpoints for non-leads), and changes nothing. Images are walked the same way
by hash, on the page URL and the API. Every list answers only the caller's objects, and no
response body carries another scope's model names, usernames or external ids.
"""

import pytest
from django.db.models import Max, Min, Q
from django.test import Client

from annotation.models import Assignment, Rating
from content.models import Asset, Pair
from exports.models import ExportJob
from judging.models import Judge, JudgeRun, PromptTemplate, Verdict
from projects.models import Project, Task
from tests.api.conftest import rate, token_client
from tests.responses import unmasked

# (method, URL with {id}, model the id belongs to, body)
OBJECT_ENDPOINTS = [
    ("get", "/api/projects/{id}/", Project, None),
    ("get", "/api/projects/{id}/report/", Project, None),
    ("get", "/api/projects/{id}/exports/", Project, None),
    ("post", "/api/projects/{id}/exports/", Project, {}),
    ("get", "/api/tasks/{id}/", Task, None),
    ("post", "/api/tasks/{id}/claim/", Task, None),
    ("get", "/api/pairs/{id}/", Pair, None),
    ("get", "/api/assignments/{id}/", Assignment, None),
    ("post", "/api/assignments/{id}/rating/", Assignment, {"overall": 4}),
    ("post", "/api/assignments/{id}/skip/", Assignment, {"reason": "probing"}),
    ("post", "/api/assignments/{id}/undo/", Assignment, None),
    ("get", "/api/ratings/{id}/", Rating, None),
    ("get", "/api/judges/{id}/", Judge, None),
    ("patch", "/api/judges/{id}/", Judge, {"concurrency": 99}),
    ("delete", "/api/judges/{id}/", Judge, None),
    ("get", "/api/runs/{id}/", JudgeRun, None),
    ("get", "/api/runs/{id}/progress/", JudgeRun, None),
    ("post", "/api/runs/{id}/cancel/", JudgeRun, None),
    ("post", "/api/runs/{id}/resume/", JudgeRun, None),
    ("get", "/api/verdicts/{id}/", Verdict, None),
    ("get", "/api/templates/{id}/", PromptTemplate, None),
]
LISTS = [
    ("/api/projects/", Project),
    ("/api/tasks/", Task),
    ("/api/pairs/", Pair),
    ("/api/assignments/", Assignment),
    ("/api/ratings/", Rating),
    ("/api/runs/", JudgeRun),
    ("/api/verdicts/", Verdict),
    ("/api/templates/", PromptTemplate),
]
NOWHERE = 10**6


def _scopes(world, caller: str) -> dict:
    """What the caller may reach, per model; `judges`: whether the judge endpoints are open."""
    if caller == "annotator":
        user, projects, lead = world.ann_a, [world.alpha], False
    elif caller == "outsider":
        user, projects, lead = world.outsider, [], False
    else:
        user, projects, lead = world.lead_b, [world.beta], True
    led = projects if lead else []
    return {
        "user": user,
        "judges": lead,
        Project: {p.pk for p in projects},
        Task: set(Task.objects.filter(project__in=projects).values_list("pk", flat=True)),
        Pair: set(Pair.objects.filter(project__in=led).values_list("pk", flat=True)),
        Assignment: set(Assignment.objects.filter(annotator=user).values_list("pk", flat=True)),
        Rating: set(Rating.objects.filter(annotator=user).values_list("pk", flat=True)),
        JudgeRun: set(JudgeRun.objects.filter(project__in=led).values_list("pk", flat=True)),
        Verdict: set(Verdict.objects.filter(pair__project__in=led).values_list("pk", flat=True)),
        PromptTemplate: set(
            PromptTemplate.objects.filter(project__in=led).values_list("pk", flat=True)
        ),
        # A lead's projects' judges and the operator's (run-only); no other project's.
        Judge: set(
            Judge.objects.filter(Q(project__in=led) | Q(project__isnull=True)).values_list(
                "pk", flat=True
            )
        )
        if lead
        else set(),
    }


# Text that must never reach the caller: other scopes' usernames, external ids (they hold the
# model names), model, judge and project names.
FORBIDDEN = {
    "annotator": ["secretmodel", "t2i-", "edit-", "ann_a2", "lead_a", "lead_b", "ann_b",
                  "baseline-a", "ext-judge", "beta"],
    "outsider": ["secretmodel", "t2i-", "edit-", "ann_a", "lead_", "ann_b", "baseline-a",
                 "ext-judge", "alpha", "beta"],
    "lead_b": ["t2i-", "alpha", "ann_a", "lead_a"],
}  # fmt: skip


def _snapshot():
    return {
        "ratings": sorted(Rating.objects.values_list("pk", "overall", "updated_at")),
        "assignments": sorted(Assignment.objects.values_list("pk", "status", "lease_expires_at")),
        "runs": sorted(JudgeRun.objects.values_list("pk", "status")),
        "judges": sorted(Judge.objects.values_list("pk", "concurrency", "updated_at")),
        "verdicts": Verdict.objects.count(),
        "exports": ExportJob.objects.count(),
    }


@pytest.fixture
def own_work(world):
    """The annotator has an assignment and a rating of their own in `alpha`."""
    return rate(world.ann_a, world.alpha_task, overall=3)


@pytest.mark.parametrize("caller", ["annotator", "outsider", "lead_b"])
def test_walking_ids_finds_nothing_of_another_scope(world, own_work, caller):
    scopes = _scopes(world, caller)
    client = token_client(scopes["user"])
    before = _snapshot()
    walked = set()
    for method, template, model, body in OBJECT_ENDPOINTS:
        span = model.objects.aggregate(low=Min("pk"), top=Max("pk"))
        low, top = max(1, (span["low"] or 1) - 3), (span["top"] or 0) + 3
        send = getattr(client, method)
        nowhere = send(template.format(id=NOWHERE), body, format="json")
        if model is Judge and not scopes["judges"]:
            expected = (403, {"detail": "only leads manage judges"})
        else:
            expected = (404, nowhere.json())
        assert (nowhere.status_code, nowhere.json()) == expected
        for pk in range(low, top + 1):
            if pk in scopes[model]:
                continue
            answer = send(template.format(id=pk), body, format="json")
            assert (answer.status_code, answer.json()) == expected, (method, template, pk)
            walked.add(template)
    assert walked == {template for _method, template, _model, _body in OBJECT_ENDPOINTS}
    assert _snapshot() == before  # nothing changed by any of it


@pytest.mark.parametrize("caller", ["annotator", "outsider", "lead_b"])
def test_lists_hold_only_the_callers_objects(world, own_work, caller):
    scopes = _scopes(world, caller)
    client = token_client(scopes["user"])
    for url, model in LISTS:
        for query in ("", "?project=alpha", "?project=beta", f"?project={world.alpha.pk}"):
            answer = client.get(f"{url}{query}{'&' if query else '?'}page_size=500")
            assert answer.status_code == 200, (url, query)
            ids = {row["id"] for row in answer.json()["results"]}
            assert ids <= scopes[model], (url, query)
            for text in FORBIDDEN[caller]:
                assert text not in answer.content.decode(), (url, query, text)
    judges = client.get("/api/judges/?page_size=500")
    assert judges.status_code == (200 if scopes["judges"] else 403)
    if scopes["judges"]:
        assert {row["id"] for row in judges.json()["results"]} == scopes[Judge]


@pytest.mark.parametrize("caller", ["annotator", "outsider", "lead_b"])
def test_project_endpoints_by_slug(world, caller):
    scopes = _scopes(world, caller)
    client = token_client(scopes["user"])
    for slug in ("alpha", "beta"):
        project = Project.objects.get(slug=slug)
        member = project.pk in scopes[Project]
        leads = caller == "lead_b" and member
        assert client.get(f"/api/projects/{slug}/").status_code == (200 if member else 404)
        assert client.get(f"/api/projects/{slug}/report/").status_code == (200 if leads else 404)
        if not leads:
            assert client.get(f"/api/projects/{slug}/exports/").status_code == 404


@pytest.mark.parametrize("caller", ["annotator", "outsider", "lead_b"])
def test_body_references_to_other_projects_answer_404(world, caller):
    scopes = _scopes(world, caller)
    client = token_client(scopes["user"])
    for project in ("alpha", str(world.alpha.pk)):
        started = client.post(
            "/api/runs/", {"project": project, "judge": world.judge.pk}, format="json"
        )
        assert started.status_code == 404
        body = {"project": project, "name": "house", "answer_format": "json",
                "body": "mine {prompt} {first} {second}"}  # fmt: skip
        assert client.post("/api/templates/", body, format="json").status_code == 404
    assert JudgeRun.objects.count() == 4
    assert PromptTemplate.objects.filter(project=world.alpha).count() == 1


# Images, by content hash: the same walk over every stored image


def _image_scope(world, caller: str) -> set[str]:
    """The hashes of the images of pairs the caller may see: a lead's projects' pairs; an
    annotator's open pairs and the pairs they hold an assignment on (their project only)."""
    user = _scopes(world, caller)["user"]
    if caller == "lead_b":
        pairs = Pair.objects.filter(project=world.beta)
    elif caller == "annotator":
        pairs = Pair.objects.filter(project=world.alpha).filter(
            Q(status__in=["queued", "in_progress"]) | Q(assignments__annotator=user)
        )
    else:
        pairs = Pair.objects.none()
    pairs = pairs.select_related("prompt", "response_a", "response_b")
    return {
        value
        for pair in pairs
        for content in (pair.prompt.content, pair.response_a.content, pair.response_b.content)
        for kind, value in content or []
        if kind == "image"
    }


def _image_answers(user, sha256: str) -> list[tuple[int, bytes]]:
    page = Client()
    page.force_login(user)
    answers = [page.get(f"/assets/{sha256}"), token_client(user).get(f"/api/assets/{sha256}/")]
    return [
        (a.status_code, unmasked(b"".join(a.streaming_content) if a.streaming else a.content))
        for a in answers
    ]


@pytest.mark.parametrize("caller", ["annotator", "outsider", "lead_b"])
def test_walking_image_hashes_finds_nothing_of_another_scope(world, own_work, caller):
    user = _scopes(world, caller)["user"]
    visible = _image_scope(world, caller)
    nowhere = _image_answers(user, "f" * 64)
    assert [status for status, _ in nowhere] == [404, 404]
    hidden = 0
    for sha256 in Asset.objects.values_list("sha256", flat=True):
        answers = _image_answers(user, sha256)
        if sha256 in visible:
            assert [status for status, _ in answers] == [200, 200], sha256
        else:
            assert answers == nowhere, sha256
            hidden += 1
    # alpha shows every image beta does (same colours): ann_a misses none; the others do.
    assert (hidden == 0) is (caller == "annotator")


@pytest.mark.parametrize("caller", ["lead_b", "ann_b", "outsider"])
def test_project_alphas_own_images_answer_404_to_other_projects(world, caller):
    """The images only alpha shows (its pairs 4 and 5: beta has 4 pairs of the same colours)."""
    user = getattr(world, caller)
    only_alpha = _image_scope(world, "annotator") - {
        value
        for pair in Pair.objects.filter(project=world.beta).select_related(
            "response_a", "response_b"
        )
        for kind, value in pair.response_a.content + pair.response_b.content
        if kind == "image"
    }
    assert len(only_alpha) == 4
    nowhere = _image_answers(user, "f" * 64)
    for sha256 in only_alpha:
        assert _image_answers(user, sha256) == nowhere
        assert _image_answers(world.ann_a, sha256)[0][0] == 200
