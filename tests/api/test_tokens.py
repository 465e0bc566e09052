"""API tokens fit for pipelines: several per user, hashed, expiring, revocable,
read-only or read-write, for all of the user's projects or one, and never more than the user.

The attack: a token limited to project A, used on project B's ids (pairs, tasks, exports,
runs, verdicts, judges, templates, assignments, ratings) by someone who may reach B with
another token, answers exactly like an id that does not exist."""

from datetime import timedelta

import pytest
from django.core.exceptions import PermissionDenied
from django.core.files.uploadedfile import SimpleUploadedFile
from django.db import connection
from django.utils import timezone
from rest_framework.test import APIClient

from annotation import access as pair_access
from annotation.models import Assignment, Rating
from content.models import Pair
from core.errors import Invalid
from exports.models import ExportJob
from judging.models import Judge, JudgeRun, PromptTemplate, Verdict
from judging.selectors import judges_for_lead
from projects import access
from projects.models import ApiToken, Membership, Project, Task
from projects.models.api_token import api_key_digest
from projects.services.api_tokens import api_token_create, api_token_revoke
from tests.api.conftest import PASSWORD, rate, token_client
from tests.api.test_idor import NOWHERE, OBJECT_ENDPOINTS
from tests.factories import api_key

REFUSED = {"detail": "Invalid token."}


def _with_key(key: str) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
    return client


def test_a_user_holds_several_tokens_each_working_on_its_own(world):
    keys = [api_key(world.lead_a, name=f"pipeline {n}") for n in range(3)]
    signed_in = APIClient().post("/api/auth/token/", {"username": "lead_a", "password": PASSWORD})
    assert signed_in.status_code == 200
    keys.append(signed_in.json()["token"])
    assert len(set(keys)) == 4
    assert ApiToken.objects.filter(user=world.lead_a).count() == 4
    for key in keys:
        assert _with_key(key).get("/api/projects/").json()["count"] == 1
    body = signed_in.json()
    assert body["name"] == "POST /api/auth/token/" and keys[-1].startswith(body["prefix"])
    token = ApiToken.objects.get(prefix=body["prefix"])
    lifetime = token.expires_at - token.created_at
    assert timedelta(days=29, hours=23) < lifetime <= timedelta(days=30)  # the default


def test_the_database_holds_no_key_only_its_sha256(world):
    key = api_key(world.lead_a, name="nightly export")
    token = ApiToken.objects.get(user=world.lead_a)
    assert token.digest == api_key_digest(key) and key.startswith(token.prefix)
    assert len(token.prefix) == 12 and len(key) > 40
    with connection.cursor() as cursor:
        for table in ("projects_apitoken", "django_session"):
            cursor.execute(f"SELECT * FROM {table}")
            assert not any(key in str(value) for row in cursor.fetchall() for value in row)
    assert (
        _with_key(key[:-1] + ("A" if key[-1] != "A" else "B")).get("/api/projects/").json()
        == REFUSED
    )


def test_an_expired_a_revoked_and_an_unknown_token_answer_the_same_401(world):
    expired = api_key(world.lead_a, name="old")
    now = timezone.now()
    ApiToken.objects.filter(name="old").update(
        created_at=now - timedelta(days=31), expires_at=now - timedelta(seconds=1)
    )
    revoked = api_token_create(user=world.lead_a, name="gone")
    api_token_revoke(user=world.lead_a, token_id=revoked.token.pk)
    world.ann_a.is_active = False
    world.ann_a.save()
    inactive = api_key(world.ann_a)
    live = api_key(world.lead_a)
    answers = set()
    for key in (expired, revoked.key, inactive, "arb_made-up", live[:-4]):
        answer = _with_key(key).get("/api/projects/")
        answers.add((answer.status_code, answer.content, answer["WWW-Authenticate"]))
    assert answers == {(401, b'{"detail":"Invalid token."}', "Token")}
    assert _with_key(live).get("/api/projects/").status_code == 200


def test_using_a_token_records_its_last_use(world):
    key = api_key(world.lead_a)
    assert ApiToken.objects.get().last_used_at is None
    _with_key(key).get("/api/projects/")
    assert ApiToken.objects.get().last_used_at is not None


@pytest.mark.parametrize(
    "method, url, body",
    [
        ("post", "/api/tasks/{task}/claim/", None),
        ("post", "/api/projects/alpha/exports/", {"format": "jsonl"}),
        ("post", "/api/judges/", {"project": "alpha", "name": "j", "backend": "random"}),
        ("patch", "/api/judges/{judge}/", {"concurrency": 3}),
        ("put", "/api/judges/{judge}/", {"concurrency": 3}),
        ("delete", "/api/judges/{judge}/", None),
        ("post", "/api/runs/{run}/cancel/", None),
    ],
)
def test_a_read_only_token_is_refused_every_write_with_a_403_saying_why(world, method, url, body):
    judge = Judge.objects.get(name="judge-unused")
    url = url.format(task=world.alpha_task.pk, judge=judge.pk, run=world.run_a.pk)
    reader = token_client(world.lead_a, access="read")
    before = (
        ExportJob.objects.count(),
        Judge.objects.count(),
        JudgeRun.objects.get(pk=world.run_a.pk).status,
    )
    answer = getattr(reader, method)(url, body, format="json")
    assert answer.status_code == 403
    assert answer.json() == {
        "detail": "This API token is read-only: it may only read (GET, HEAD, OPTIONS)."
    }
    after = (
        ExportJob.objects.count(),
        Judge.objects.count(),
        JudgeRun.objects.get(pk=world.run_a.pk).status,
    )
    assert after == before
    for safe in ("get", "head", "options"):
        assert getattr(reader, safe)("/api/projects/").status_code == 200
    writer = token_client(world.lead_a)  # the same request with a read-write token goes through
    assert writer.post(f"/api/runs/{world.run_a.pk}/cancel/").status_code in (200, 409)


def test_a_session_is_not_limited_by_any_token(world):
    api_key(world.lead_a, access="read", project=world.alpha)
    browser = APIClient()
    browser.force_login(world.lead_a)
    assert browser.post(f"/api/runs/{world.run_a.pk}/cancel/").status_code in (200, 409)


@pytest.fixture
def lead_of_both(world, django_capture_on_commit_callbacks):
    """lead_b leads alpha too, and has an export job in beta."""
    Membership.objects.create(user=world.lead_b, project=world.alpha, role=Membership.Role.LEAD)
    return world.lead_b


def _beta_ids(world) -> dict:
    beta = world.beta
    export = ExportJob.objects.create(project=beta, requested_by=world.lead_b)
    return {
        Project: beta.pk,
        Task: world.beta_task.pk,
        Pair: Pair.objects.filter(project=beta).first().pk,
        Judge: Judge.objects.filter(project=beta).first().pk,
        JudgeRun: world.run_b.pk,
        Verdict: Verdict.objects.filter(pair__project=beta).first().pk,
        PromptTemplate: PromptTemplate.objects.filter(project=beta).first().pk,
        ExportJob: export.pk,
    }


def test_a_token_for_project_a_finds_project_bs_objects_missing(world, lead_of_both):
    ids = _beta_ids(world)
    runs_before = JudgeRun.objects.filter(project=world.beta).count()
    scoped = token_client(lead_of_both, project=world.alpha)
    everywhere = token_client(lead_of_both)
    reached = 0
    for method, template, model, body in OBJECT_ENDPOINTS:
        if model not in ids:
            continue
        send = getattr(scoped, method)
        missing = send(template.format(id=NOWHERE), body, format="json")
        answer = send(template.format(id=ids[model]), body, format="json")
        assert (answer.status_code, answer.content) == (missing.status_code, missing.content), (
            method,
            template,
        )
        if method == "get":  # the same user's all-projects token reaches it: the test can fail
            assert getattr(everywhere, method)(template.format(id=ids[model])).status_code == 200
            reached += 1
    assert reached >= 9
    answers = []
    export = ids[ExportJob]
    for suffix in ("", "download/"):
        for project in ("beta", str(world.beta.pk)):
            url = f"/api/projects/{project}/exports/{export}/{suffix}"
            nowhere = f"/api/projects/{NOWHERE}/exports/{NOWHERE}/{suffix}"
            assert scoped.get(url).status_code == scoped.get(nowhere).status_code == 404
            assert scoped.get(url).content == scoped.get(nowhere).content
        assert scoped.get(f"/api/projects/alpha/exports/{export}/{suffix}").status_code == 404
    assert everywhere.get(f"/api/projects/beta/exports/{export}/").status_code == 200
    assert scoped.get("/api/projects/beta/connections/").status_code == 404
    for project in ("beta", str(NOWHERE)):
        upload = SimpleUploadedFile("pairs.jsonl", b'{"id": "x"}\n')
        body = {"project": project, "task": "edit", "file": upload}
        answers.append(scoped.post("/api/pairs/import/", body, format="multipart"))
    assert answers[-2].status_code == 404
    assert answers[-2].content == answers[-1].content
    assert scoped.post(
        "/api/runs/", {"project": "beta", "judge": ids[Judge], "task": "edit"}, format="json"
    ).status_code in (400, 404)
    assert JudgeRun.objects.filter(project=world.beta).count() == runs_before


def test_a_token_for_project_a_lists_project_a_only(world, lead_of_both):
    _beta_ids(world)
    scoped = token_client(lead_of_both, project=world.alpha)
    everywhere = token_client(lead_of_both)
    lists = {
        "/api/projects/": ("slug", {"alpha"}),
        "/api/tasks/": ("project", {world.alpha.pk}),
        "/api/pairs/": ("project", {world.alpha.pk}),
        "/api/runs/": ("project", {world.alpha.pk}),
        "/api/templates/": ("project", {world.alpha.pk}),
    }
    for url, (field, alpha_only) in lists.items():
        seen = {row[field] for row in scoped.get(url, {"page_size": 500}).json()["results"]}
        assert seen == alpha_only, url
        wider = {row[field] for row in everywhere.get(url, {"page_size": 500}).json()["results"]}
        assert wider > alpha_only, url
    verdicts = scoped.get("/api/verdicts/", {"page_size": 500}).json()
    assert verdicts["count"] == Verdict.objects.filter(pair__project=world.alpha).count()
    judges = {row["project"] for row in scoped.get("/api/judges/").json()["results"]}
    assert judges <= {world.alpha.pk, None}
    assert scoped.get("/api/pairs/", {"project": "beta"}).json()["count"] == 0


def test_a_token_for_project_a_reaches_no_own_work_in_project_b(world):
    """The annotator side: ann_b joins alpha too; their beta assignment and rating are out
    of reach of a token for alpha, and beta's tasks cannot be claimed."""
    ann_b = world.ann_b
    Membership.objects.create(user=ann_b, project=world.alpha, role=Membership.Role.ANNOTATOR)
    rate(ann_b, world.alpha_task, overall=3)
    scoped = token_client(ann_b, project=world.alpha)
    beta_assignment = Assignment.objects.get(annotator=ann_b, pair__project=world.beta)
    beta_rating = Rating.objects.get(annotator=ann_b, pair__project=world.beta)
    for url in (f"/api/assignments/{beta_assignment.pk}/", f"/api/ratings/{beta_rating.pk}/"):
        assert scoped.get(url).status_code == 404
    missing = scoped.post(f"/api/tasks/{NOWHERE}/claim/")
    claim = scoped.post(f"/api/tasks/{world.beta_task.pk}/claim/")
    assert (claim.status_code, claim.content) == (missing.status_code, missing.content)
    answer = scoped.post(f"/api/assignments/{beta_assignment.pk}/rating/", {"overall": 1})
    assert answer.status_code == 404
    assert Rating.objects.get(pk=beta_rating.pk).overall == beta_rating.overall
    for url in ("/api/assignments/", "/api/ratings/"):
        rows = scoped.get(url).json()["results"]
        tasks = {row["task"]["id"] if url == "/api/assignments/" else row["task"] for row in rows}
        assert tasks == {world.alpha_task.pk}, url
    assert token_client(ann_b).get(f"/api/ratings/{beta_rating.pk}/").status_code == 200


def test_an_operators_token_for_one_project_is_not_the_operators_reach(world, django_user_model):
    operator = django_user_model.objects.create_superuser("root", password="pw-root-1")
    scoped = token_client(operator, project=world.alpha)
    assert [p["slug"] for p in scoped.get("/api/projects/").json()["results"]] == ["alpha"]
    assert (
        scoped.get(f"/api/pairs/{Pair.objects.filter(project=world.beta).first().pk}/").status_code
        == 404
    )
    operators_judge = world.judge  # no project: the operator changes it only with a full token
    assert scoped.patch(f"/api/judges/{operators_judge.pk}/", {"concurrency": 2}).status_code == 403
    assert (
        token_client(operator)
        .patch(f"/api/judges/{operators_judge.pk}/", {"concurrency": 2})
        .status_code
        == 200
    )


def test_a_token_cannot_be_made_for_a_project_the_user_is_not_in(world):
    with pytest.raises(Invalid):
        api_token_create(user=world.lead_a, name="x", project=world.beta)
    with pytest.raises(Invalid):
        api_token_create(user=world.lead_a, name="x", days=366)
    with pytest.raises(Invalid):
        api_token_create(user=world.lead_a, name="  ")
    assert not ApiToken.objects.exists()


def test_a_user_holds_at_most_the_allowed_number_of_usable_tokens(world, settings):
    settings.ARBITER_API_TOKENS_PER_USER = 2
    api_key(world.lead_a)
    doomed = api_token_create(user=world.lead_a, name="b")
    answer = APIClient().post("/api/auth/token/", {"username": "lead_a", "password": PASSWORD})
    assert answer.status_code == 409 and "revoke one" in answer.json()["detail"]
    api_token_revoke(user=world.lead_a, token_id=doomed.token.pk)
    again = APIClient().post("/api/auth/token/", {"username": "lead_a", "password": PASSWORD})
    assert again.status_code == 200


def test_a_script_that_signs_in_on_every_run_pushes_out_its_oldest_sign_in_token(world, settings):
    """POST /api/auth/token/ on every run (as the API's README example does): at the cap the
    oldest token from a sign-in is revoked to make room; a token made on the account page
    never is."""
    settings.ARBITER_API_TOKENS_PER_USER = 3
    kept = api_token_create(user=world.lead_a, name="nightly export")

    def sign_in():
        answer = APIClient().post("/api/auth/token/", {"username": "lead_a", "password": PASSWORD})
        assert answer.status_code == 200, answer.content
        return answer.json()["token"]

    keys = [sign_in() for _ in range(5)]
    usable = ApiToken.objects.filter(user=world.lead_a, revoked_at__isnull=True)
    assert usable.count() == 3
    assert set(usable.values_list("name", flat=True)) == {"nightly export", "POST /api/auth/token/"}

    def answers(key):
        client = APIClient()
        client.credentials(HTTP_AUTHORIZATION=f"Token {key}")
        return client.get("/api/projects/").status_code

    assert [answers(key) for key in keys] == [401, 401, 401, 200, 200]
    assert answers(kept.key) == 200


def test_every_scope_of_the_access_policy_keeps_to_the_limited_project(world):
    """The narrowing lives in the access policy's roots, so every scope built on them keeps
    to the project: a user who leads beta and annotates in both, limited to alpha."""
    user = world.ann_b
    Membership.objects.filter(user=user).update(role=Membership.Role.LEAD)
    Membership.objects.create(user=user, project=world.alpha, role=Membership.Role.ANNOTATOR)
    rate(user, world.alpha_task, overall=3)
    alpha, beta = world.alpha.pk, world.beta.pk

    def projects_of(user) -> dict:
        return {
            "member": set(access.member_projects(user).values_list("pk", flat=True)),
            "led": set(access.led_projects(user).values_list("pk", flat=True)),
            "roles": set(access.project_roles(user)),
            "visible tasks": set(access.visible_tasks(user).values_list("project", flat=True)),
            "annotatable": set(access.annotatable_tasks(user).values_list("project", flat=True)),
            "led pairs": set(pair_access.led_pairs(user).values_list("project", flat=True)),
            "images": set(
                pair_access.pairs_showing_images_to(user).values_list("project", flat=True)
            ),
            "assignments": set(
                pair_access.own_assignments(user).values_list("pair__project", flat=True)
            ),
            "ratings": set(pair_access.own_ratings(user).values_list("pair__project", flat=True)),
        }

    unlimited = projects_of(user)
    assert unlimited["member"] == unlimited["images"] == {alpha, beta}  # the test can fail
    assert unlimited["led"] == {beta}
    access.limit_to_project(user, alpha)
    limited = projects_of(user)
    assert {name: found - {alpha} for name, found in limited.items()} == {
        name: set() for name in limited
    }
    assert limited["assignments"] == limited["ratings"] == {alpha}
    assert not access.is_lead_anywhere(user)  # leads beta only: not through this token
    with pytest.raises(PermissionDenied):
        judges_for_lead(user)
