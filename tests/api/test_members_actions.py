"""The members page's actions in the API: a lead adds an existing account (one answer, one
time, one hourly limit shared with the page), reads and changes a member's quotas (the next
claim obeys them), lists the pairs in progress and releases one (its slot goes back to the
pool). Another project's lead, a token limited to another project and the project's
annotators get the 404 of a missing id; a read-only token may not write; hostile bodies are
400s that change nothing."""

import time

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from api.authentication import READ_ONLY
from projects.models import Membership, Project
from projects.models.placeholder import PlaceholderAccount
from projects.services import member_add_limits
from tests.api.conftest import PASSWORD, token_client
from tests.factories import member, queued_pairs

MEMBERS = "/api/projects/{project}/members/"
MEMBER = "/api/projects/{project}/members/{id}/"
LEASES = "/api/projects/{project}/leases/"
RELEASE = "/api/projects/{project}/leases/{id}/release/"
NOWHERE = 10**6


@pytest.fixture
def quick(monkeypatch):
    """The equal-time floor of an addition, off where a test does not measure it."""
    monkeypatch.setattr(member_add_limits, "ADD_SECONDS", 0.0)


@pytest.fixture
def as_lead(world):
    return token_client(world.lead_a)


def membership(user, project) -> Membership:
    return Membership.objects.get(user=user, project=project)


def members_of(project) -> dict[str, str]:
    return dict(Membership.objects.filter(project=project).values_list("user__username", "role"))


def add(client, identifier, project="alpha", **body):
    return client.post(MEMBERS.format(project=project), {"identifier": identifier, **body})


def claim(client, task):
    """The caller's next pair of the task through the API; its assignment, or None."""
    answer = client.post(f"/api/tasks/{task.pk}/claim/")
    assert answer.status_code == 200, answer.content
    found = answer.json()["assignment"]
    return None if found is None else Assignment.objects.get(pk=found["id"])


# Members and quotas


def test_the_lead_lists_the_members_with_their_role_tasks_and_quotas(world, as_lead):
    Membership.objects.filter(user=world.ann_a, project=world.alpha).update(task_quota=4)
    membership(world.ann_a, world.alpha).tasks.set([world.alpha_task])

    answer = as_lead.get(MEMBERS.format(project="alpha"))

    assert answer.status_code == 200
    rows = answer.json()["results"]
    assert [row["username"] for row in rows] == ["lead_a", "ann_a", "ann_a2"]  # leads first
    ann_a = membership(world.ann_a, world.alpha)
    assert rows[1] == {
        "id": ann_a.pk,
        "username": "ann_a",
        "role": "annotator",
        "tasks": ["t2i"],
        "project_quota": None,
        "task_quota": 4,
    }
    one = as_lead.get(MEMBER.format(project=world.alpha.pk, id=ann_a.pk))
    assert one.status_code == 200 and one.json() == rows[1]


def test_the_lead_adds_an_existing_account_by_username_or_email(world, as_lead, quick):
    User.objects.create_user("alice", email="alice@example.org", password=PASSWORD)
    User.objects.create_user("bob", email="Bob@Example.org", password=PASSWORD)

    by_name = add(as_lead, "alice", tasks=["t2i"])
    by_email = add(as_lead, "bob@example.org", role="lead")

    assert by_name.status_code == by_email.status_code == 202
    assert {("alice", "annotator"), ("bob", "lead")} <= set(members_of(world.alpha).items())
    alice = Membership.objects.get(user__username="alice")
    assert list(alice.tasks.values_list("slug", flat=True)) == ["t2i"]
    listed = as_lead.get(MEMBERS.format(project="alpha")).json()["results"]
    assert {"alice", "bob"} <= {row["username"] for row in listed}


def test_adding_answers_the_same_whether_or_not_an_account_matched(world, as_lead, quick):
    User.objects.create_user("carol", password=PASSWORD)
    User.objects.create_user("dave", email="shared@example.org", password=PASSWORD)
    User.objects.create_user("erin", email="shared@example.org", password=PASSWORD)
    User.objects.create_user("gone", password=PASSWORD, is_active=False)
    PlaceholderAccount.objects.create(user=User.objects.create_user("imported-x-1"))
    before = members_of(world.alpha)

    names = ["carol", "nobody", "shared@example.org", "gone", "imported-x-1", "ann_a", "lead_b"]
    answers = {name: add(as_lead, name, role="lead") for name in names}

    assert {(a.status_code, a.content) for a in answers.values()} == {
        (202, answers["carol"].content)
    }
    assert set(answers["nobody"].json()) == {"detail"}
    assert _headers(answers["nobody"]) == _headers(answers["carol"])
    after = members_of(world.alpha)
    assert after == before | {"carol": "lead", "lead_b": "lead"}  # ann_a keeps her role


def _headers(answer) -> dict:
    """The headers, but those that differ on every answer (the date, the CSP's nonce)."""
    varying = {"Date", "Content-Security-Policy"}
    return {key: value for key, value in answer.items() if key not in varying}


def test_adding_takes_as_long_whether_or_not_an_account_matched(world, as_lead):
    User.objects.create_user("frank", password=PASSWORD)
    for name in ("frank", "no-such-person"):
        started = time.monotonic()
        assert add(as_lead, name).status_code == 202
        assert time.monotonic() - started >= member_add_limits.ADD_SECONDS == 0.3
    assert "frank" in members_of(world.alpha)


def test_additions_past_the_hourly_limit_answer_429_counting_the_pages_too(
    world, as_lead, quick, client, monkeypatch
):
    monkeypatch.setattr(member_add_limits, "ADDS_PER_HOUR", 3)
    client.force_login(world.lead_a)
    page = client.post(
        reverse("member-add", args=["alpha"]),
        {"add-identifier": "nobody-0", "add-role": "annotator"},
    )
    assert page.status_code == 302
    assert add(as_lead, "nobody-1").status_code == 202
    assert add(as_lead, "nobody-2").status_code == 202
    User.objects.create_user("late", password=PASSWORD)

    refused = add(as_lead, "late")

    assert refused.status_code == 429
    assert 0 < int(refused["Retry-After"]) <= 3601
    assert refused.json()["detail"].startswith("Too many additions: try again in ")
    assert "late" not in members_of(world.alpha)
    other_lead = token_client(world.lead_b)  # the limit is the lead's, not the server's
    assert add(other_lead, "late", project="beta").status_code == 202


def test_the_lead_changes_quotas_and_the_next_claim_obeys_them(world, as_lead):
    ann_a = membership(world.ann_a, world.alpha)
    url = MEMBER.format(project="alpha", id=ann_a.pk)
    as_ann = token_client(world.ann_a)

    changed = as_lead.patch(url, {"project_quota": 1})

    assert changed.status_code == 200
    assert (changed.json()["project_quota"], changed.json()["task_quota"]) == (1, None)
    first = claim(as_ann, world.alpha_task)
    assert first is not None
    rating_submit(first.pk, world.ann_a, RatingInput(overall=5))
    assert claim(as_ann, world.alpha_task) is None  # the quota is reached

    assert as_lead.patch(url, {"task_quota": 3}).json()["project_quota"] == 1  # kept
    assert claim(as_ann, world.alpha_task) is None
    lifted = as_lead.patch(url, {"project_quota": None})
    assert (lifted.json()["project_quota"], lifted.json()["task_quota"]) == (None, 3)
    assert claim(as_ann, world.alpha_task) is not None
    ann_a.refresh_from_db()
    assert (ann_a.role, ann_a.project_quota, ann_a.task_quota) == ("annotator", None, 3)


# (body, the fields its 400 names)
HOSTILE_QUOTAS = [
    ({"project_quota": 0}, {"project_quota"}),
    ({"project_quota": -1}, {"project_quota"}),
    ({"project_quota": 10**40}, {"project_quota"}),
    ({"project_quota": 10_000_001}, {"project_quota"}),
    ({"project_quota": 2.5}, {"project_quota"}),
    ({"project_quota": True}, {"project_quota"}),
    ({"project_quota": "two"}, {"project_quota"}),
    ({"project_quota": [2]}, {"project_quota"}),
    ({"task_quota": {"n": 2}}, {"task_quota"}),
    ({"task_quota": "2\x00"}, {"task_quota"}),
    ({"project_quota": 2, "role": "lead"}, {"role"}),
    ({"project_quota": 2, "tasks": []}, {"tasks"}),
]
HOSTILE_ADDS = [
    ({}, {"identifier"}),
    ({"identifier": ""}, {"identifier"}),
    ({"identifier": "   "}, {"identifier"}),
    ({"identifier": 5}, {"identifier"}),
    ({"identifier": ["ann_b"]}, {"identifier"}),
    ({"identifier": {"username": "ann_b"}}, {"identifier"}),
    ({"identifier": None}, {"identifier"}),
    ({"identifier": "ann_b\x00"}, {"identifier"}),
    ({"identifier": "x" * 255}, {"identifier"}),
    ({"identifier": "ann_b", "role": "owner"}, {"role"}),
    ({"identifier": "ann_b", "role": ["lead"]}, {"role"}),
    ({"identifier": "ann_b", "tasks": "t2i"}, {"tasks"}),
    ({"identifier": "ann_b", "tasks": ["edit"]}, {"tasks"}),  # beta's
    ({"identifier": "ann_b", "tasks": ["t2i\x00"]}, {"tasks"}),
    ({"identifier": "ann_b", "tasks": [{"slug": "t2i"}]}, {"tasks"}),
    ({"identifier": "ann_b", "tasks": ["t2i"] * 501}, {"tasks"}),
    ({"identifier": "ann_b", "project": "beta"}, {"project"}),
    ({"identifier": "ann_b", "project_quota": 3}, {"project_quota"}),
]


def test_hostile_quota_bodies_are_400s_naming_the_field_that_change_nothing(world, as_lead):
    ann_a = membership(world.ann_a, world.alpha)
    for body, fields in HOSTILE_QUOTAS:
        answer = as_lead.patch(MEMBER.format(project="alpha", id=ann_a.pk), body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert set(answer.json()) == fields, body
    ann_a.refresh_from_db()
    assert (ann_a.role, ann_a.project_quota, ann_a.task_quota) == ("annotator", None, None)


def test_hostile_add_bodies_are_400s_that_add_no_one_and_are_not_counted(
    world, as_lead, quick, monkeypatch
):
    monkeypatch.setattr(member_add_limits, "ADDS_PER_HOUR", 1)
    for body, fields in HOSTILE_ADDS:
        answer = as_lead.post(MEMBERS.format(project="alpha"), body, format="json")
        assert answer.status_code == 400, (body, answer.content)
        assert set(answer.json()) == fields, body
    assert "ann_b" not in members_of(world.alpha)
    assert add(as_lead, "ann_b").status_code == 202  # the one addition of the hour left
    assert "ann_b" in members_of(world.alpha)


def test_hostile_raw_bodies_are_400s(world, as_lead):
    url = MEMBERS.format(project="alpha")
    for raw in (
        b"[]", b"null", b'"ann_b"', b"{not json", b'{"identifier": NaN}', b"[" * 10_000,
        rb'{"identifier": "\ud800"}', rb'{"identifier": "ann_b", "tasks": ["\udfff"]}',
        rb'{"identifier": "ann_b", "\ud800": 1}', rb'{"identifier": "ann_b", "role": "\ud800"}',
    ):  # fmt: skip
        answer = as_lead.generic("POST", url, raw, "application/json")
        assert answer.status_code == 400, (raw[:20], answer.content)
    ann_a = membership(world.ann_a, world.alpha)
    patched = as_lead.generic(
        "PATCH", MEMBER.format(project="alpha", id=ann_a.pk), b'{"project_quota": 1e999}',
        "application/json",
    )  # fmt: skip
    assert patched.status_code == 400
    assert "ann_b" not in members_of(world.alpha)


# Pairs in progress


def test_the_lead_lists_the_pairs_in_progress_and_releases_one_to_the_pool(world, as_lead):
    Project.objects.filter(pk=world.alpha.pk).update(annotators_per_pair=1)
    held = claim(token_client(world.ann_a), world.alpha_task)
    while (other := assignment_claim(world.ann_a2, world.alpha_task)) is not None:
        rating_submit(other.pk, world.ann_a2, RatingInput(overall=2))  # every other pair
    assert claim(token_client(world.ann_a2), world.alpha_task) is None  # held: no slot left

    listed = as_lead.get(LEASES.format(project="alpha"))
    assert listed.status_code == 200
    rows = listed.json()["results"]
    assert [(row["id"], row["pair"], row["task"], row["annotator"]) for row in rows] == [
        (held.pk, held.pair_id, "t2i", "ann_a")
    ]
    released = as_lead.post(RELEASE.format(project="alpha", id=held.pk))

    assert released.status_code == 200
    assert released.json()["id"] == held.pk and released.json()["status"] == "expired"
    assert as_lead.get(LEASES.format(project="alpha")).json()["count"] == 0
    taken = claim(token_client(world.ann_a2), world.alpha_task)
    assert taken is not None and taken.pair_id == held.pair_id  # the slot is free again
    again = claim(token_client(world.ann_a), world.alpha_task)
    assert again is None or again.pair_id != held.pair_id  # never the same pair again


def test_a_release_of_a_pair_no_longer_in_progress_answers_like_a_missing_id(world, as_lead):
    held = assignment_claim(world.ann_a, world.alpha_task)
    beta_held = assignment_claim(world.ann_b, world.beta_task)
    missing = as_lead.post(RELEASE.format(project="alpha", id=NOWHERE))
    assert missing.status_code == 404

    def release(pk, project="alpha"):
        answer = as_lead.post(RELEASE.format(project=project, id=pk))
        return answer.status_code, answer.json()

    assert release(beta_held.pk) == (404, missing.json())  # another project's
    for malformed in ("abc", "0", "-1", str(2**63), "1e3"):
        assert release(malformed) == (404, missing.json())
    rating_submit(held.pk, world.ann_a, RatingInput(overall=5))
    assert release(held.pk) == (404, missing.json())  # submitted
    assert Assignment.objects.get(pk=held.pk).status == Assignment.Status.SUBMITTED
    assert Assignment.objects.get(pk=beta_held.pk).status == Assignment.Status.LEASED


# Scope: another project's lead, a token for another project, annotators, read-only tokens


def _alpha_urls(world) -> list[tuple[str, str, dict | None]]:
    """Every new operation on alpha's objects: (method, URL, body)."""
    ann_a = membership(world.ann_a, world.alpha)
    held = assignment_claim(world.ann_a, world.alpha_task)
    return [
        ("get", MEMBERS.format(project="alpha"), None),
        ("post", MEMBERS.format(project="alpha"), {"identifier": "ann_b"}),
        ("get", MEMBER.format(project="alpha", id=ann_a.pk), None),
        ("patch", MEMBER.format(project="alpha", id=ann_a.pk), {"project_quota": 1}),
        ("get", LEASES.format(project="alpha"), None),
        ("post", RELEASE.format(project="alpha", id=held.pk), None),
    ]


def _unchanged(world) -> tuple:
    return (
        members_of(world.alpha),
        sorted(Membership.objects.values_list("pk", "project_quota", "task_quota")),
        sorted(Assignment.objects.values_list("pk", "status")),
    )


def _as_if_missing(client, method, url, body):
    """The answer on alpha's object, and on the same URL with nothing there (a project and
    ids that do not exist)."""
    send = getattr(client, method)
    nowhere = url.replace("/alpha/", "/nowhere/")
    return send(url, body, format="json"), send(nowhere, body, format="json")


@pytest.mark.parametrize("caller", ["lead_b", "scoped_to_beta", "annotator", "outsider"])
def test_callers_who_do_not_lead_alpha_get_the_404_of_a_missing_project(world, quick, caller):
    if caller == "scoped_to_beta":  # leads both projects, with a token for beta only
        Membership.objects.create(user=world.lead_b, project=world.alpha, role="lead")
        client = token_client(world.lead_b, project=world.beta)
    else:
        user = {"lead_b": world.lead_b, "annotator": world.ann_a, "outsider": world.outsider}
        client = token_client(user[caller])
    urls = _alpha_urls(world)
    before = _unchanged(world)
    for method, url, body in urls:
        answer, missing = _as_if_missing(client, method, url, body)
        assert (answer.status_code, answer.json()) == (404, missing.json()), (method, url)
        assert missing.status_code == 404
    assert _unchanged(world) == before
    if caller == "scoped_to_beta":  # the same person with an unlimited token reaches alpha
        assert token_client(world.lead_b).get(urls[0][1]).status_code == 200


def test_alpha_ids_through_betas_urls_answer_like_missing_ones(world, quick):
    lead_b = token_client(world.lead_b)
    ann_a = membership(world.ann_a, world.alpha)
    held = assignment_claim(world.ann_a, world.alpha_task)
    before = _unchanged(world)
    for method, template, pk, body in [
        ("get", MEMBER, ann_a.pk, None),
        ("patch", MEMBER, ann_a.pk, {"task_quota": 1}),
        ("post", RELEASE, held.pk, None),
    ]:
        send = getattr(lead_b, method)
        answer = send(template.format(project="beta", id=pk), body, format="json")
        missing = send(template.format(project="beta", id=NOWHERE), body, format="json")
        assert (answer.status_code, answer.json()) == (404, missing.json()), template
    assert _unchanged(world) == before


def test_a_read_only_token_reads_but_may_not_write(world, quick):
    reader = token_client(world.lead_a, access="read")
    urls = _alpha_urls(world)
    before = _unchanged(world)
    for method, url, body in urls:
        answer = getattr(reader, method)(url, body, format="json")
        if method == "get":
            assert answer.status_code == 200, url
        else:
            assert (answer.status_code, answer.json()) == (403, {"detail": READ_ONLY}), url
    assert _unchanged(world) == before  # the pair in progress still held, no one added


# Query budgets


@pytest.mark.parametrize(
    ("url", "budget"),
    [
        # the token, the project, the count, the page, the tasks of the page's members
        (MEMBERS.format(project="alpha"), 5),
        # the token, the project, the pairs in progress with their annotators and tasks
        (LEASES.format(project="alpha"), 3),
    ],
)
def test_the_lists_have_a_fixed_query_budget(world, tmp_path, as_lead, url, budget):
    assignment_claim(world.ann_a, world.alpha_task)
    as_lead.get("/api/")  # the token's first use (its last-use time written)
    with CaptureQueriesContext(connection) as first:
        assert as_lead.get(url).status_code == 200
    more = queued_pairs(tmp_path, project_slug="alpha", task_slug="edit", count=4)
    for i in range(4):
        extra = member(f"extra{i}", world.alpha)
        Membership.objects.get(user=extra).tasks.set([more, world.alpha_task])
        assignment_claim(extra, more)
        assignment_claim(extra, world.alpha_task)
    with CaptureQueriesContext(connection) as after:
        answer = as_lead.get(url)
    assert answer.json()["count"] > 3
    assert len(first) == len(after) <= budget
