"""A lead's member tools beside invitations: add an existing account by username or e-mail
(one answer whether or not it exists, limited per lead), cap what an annotator may take
(per project, per task: enforced where pairs are claimed) and give a stuck pair back to the
pool. Every id is scoped to the lead's projects: another project's answers like a missing one."""

import re
import time

import pytest
from django.contrib.auth.models import User
from django.contrib.messages import get_messages
from django.urls import reverse

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim, assignment_skip
from annotation.services.ratings import RatingInput, rating_submit
from audit.models import AuditEntry
from projects.events import project_event
from projects.models import Membership, Project, Task
from projects.models.placeholder import PlaceholderAccount
from projects.services import member_add_limits
from tests.factories import member, queued_pairs
from tests.members.conftest import PASSWORD

pytestmark = pytest.mark.django_db


@pytest.fixture
def quick(monkeypatch):
    """The equal-time floor of an addition, off where a test does not measure it."""
    monkeypatch.setattr(member_add_limits, "ADD_SECONDS", 0.0)


def add(client, project, identifier, role="annotator", **extra):
    data = {"add-identifier": identifier, "add-role": role, **extra}
    return client.post(reverse("member-add", args=[project.slug]), data)


def said(answer) -> list[str]:
    return [str(message) for message in get_messages(answer.wsgi_request)]


def test_an_existing_account_is_added_by_username_and_by_email(lead_client, project, quick):
    User.objects.create_user("alice", email="alice@example.org", password=PASSWORD)
    User.objects.create_user("bob", email="Bob@Example.org", password=PASSWORD)

    assert add(lead_client, project, "alice").status_code == 302
    assert add(lead_client, project, "bob@example.org", role="lead").status_code == 302

    roles = dict(Membership.objects.filter(project=project).values_list("user__username", "role"))
    assert roles["alice"] == "annotator" and roles["bob"] == "lead"
    page = lead_client.get(reverse("project-members", args=[project.slug])).content.decode()
    assert "alice" in page and "bob" in page


def test_the_answer_is_the_same_whether_or_not_an_account_matched(lead_client, project, quick):
    User.objects.create_user("carol", password=PASSWORD)
    User.objects.create_user("dave", email="shared@example.org", password=PASSWORD)
    User.objects.create_user("erin", email="shared@example.org", password=PASSWORD)
    User.objects.create_user("gone", password=PASSWORD, is_active=False)
    ghost = User.objects.create_user("imported-x-1", password=PASSWORD)
    PlaceholderAccount.objects.create(user=ghost)

    answers = {
        name: add(lead_client, project, name)
        for name in ("carol", "nobody", "shared@example.org", "gone", "imported-x-1")
    }

    assert {answer.status_code for answer in answers.values()} == {302}
    assert {answer["Location"] for answer in answers.values()} == {
        reverse("project-members", args=[project.slug])
    }
    texts = {name: said(answer)[-1] for name, answer in answers.items()}  # each one's answer
    assert len(set(texts.values())) == 1, texts
    added = set(Membership.objects.filter(project=project).values_list("user__username", flat=True))
    assert "carol" in added
    assert not added & {"dave", "erin", "gone", "imported-x-1"}


def test_adding_takes_as_long_whether_or_not_an_account_matched(lead_client, project):
    User.objects.create_user("frank", password=PASSWORD)
    floor = member_add_limits.ADD_SECONDS
    for name in ("frank", "no-such-person"):
        started = time.monotonic()
        add(lead_client, project, name)
        assert time.monotonic() - started >= floor


def test_a_member_keeps_their_role_when_added_again(lead_client, project, quick):
    lead = Membership.objects.get(project=project, role="lead").user
    ann = member("ann", project)
    add(lead_client, project, "ann", role="lead")
    add(lead_client, project, lead.username, role="annotator")
    assert Membership.objects.get(user=ann, project=project).role == "annotator"
    assert Membership.objects.get(user=lead, project=project).role == "lead"


def test_additions_are_limited_per_lead(lead_client, project, quick, monkeypatch):
    monkeypatch.setattr(member_add_limits, "ADDS_PER_HOUR", 3)
    for n in range(3):
        add(lead_client, project, f"nobody-{n}")
    User.objects.create_user("late", password=PASSWORD)

    answer = add(lead_client, project, "late")

    assert answer.status_code == 302
    assert any("Too many additions" in text for text in said(answer))
    assert not Membership.objects.filter(project=project, user__username="late").exists()


def test_another_projects_lead_cannot_add_to_this_project(client, project, quick):
    other = Project.objects.create(slug="other", name="Other")
    client.force_login(member("stranger", other, role="lead"))
    User.objects.create_user("target", password=PASSWORD)
    assert add(client, project, "target").status_code == 404
    assert client.post(reverse("member-add", args=["missing"]), {}).status_code == 404
    assert not Membership.objects.filter(user__username="target").exists()


def test_an_annotator_cannot_add_members(client, project, quick):
    client.force_login(member("ann", project))
    User.objects.create_user("friend", password=PASSWORD)
    assert add(client, project, "friend").status_code in (403, 404)
    assert not Membership.objects.filter(user__username="friend").exists()


# Quotas


def rate(user, task) -> Assignment | None:
    assignment = assignment_claim(user, task)
    if assignment is not None:
        rating_submit(assignment.pk, user, RatingInput(overall=5))
    return assignment


def test_the_lead_sets_a_quota_and_the_claim_stops_there(lead_client, project, task):
    ann = member("ann", project)
    membership = Membership.objects.get(user=ann, project=project)
    answer = lead_client.post(
        reverse("member-update", args=[project.slug, membership.pk]),
        {"role": "annotator", "project_quota": "2", "task_quota": ""},
    )
    assert answer.status_code == 302
    membership.refresh_from_db()
    assert (membership.project_quota, membership.task_quota) == (2, None)

    assert rate(ann, task) is not None
    skipped = assignment_claim(ann, task)
    assignment_skip(skipped.pk, ann, "Outside my expertise")  # a skip takes no quota
    assert rate(ann, task) is not None
    assert assignment_claim(ann, task) is None
    assert Assignment.objects.filter(annotator=ann, status="submitted").count() == 2


def test_a_held_pair_counts_and_is_still_resumed_at_the_quota(project, task):
    ann = member("ann", project)
    Membership.objects.filter(user=ann).update(task_quota=1)
    held = assignment_claim(ann, task)
    assert assignment_claim(ann, task).pk == held.pk  # their own lease, resumed
    rating_submit(held.pk, ann, RatingInput(overall=5))
    assert assignment_claim(ann, task) is None


def test_a_task_quota_counts_each_task_and_the_project_quota_all(project, task, tmp_path):
    edit = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=3)
    ann = member("ann", project)
    Membership.objects.filter(user=ann).update(task_quota=1, project_quota=3)
    assert rate(ann, task) is not None and rate(ann, task) is None
    assert rate(ann, edit) is not None and rate(ann, edit) is None
    other = member("bea", project)
    Membership.objects.filter(user=other).update(task_quota=2, project_quota=3)
    assert [rate(other, t) is not None for t in (task, task, task, edit, edit)] == [
        True, True, False, True, False,
    ]  # fmt: skip


def test_home_and_the_end_of_a_task_say_the_quota_is_reached(client, project, task, tmp_path):
    edit = queued_pairs(tmp_path, project_slug=project.slug, task_slug="edit", count=3)
    ann = member("ann", project)
    Membership.objects.filter(user=ann).update(task_quota=2, project_quota=3)
    client.force_login(ann)

    def remaining() -> dict[str, str]:
        home = client.get(reverse("home")).content.decode()
        cells = re.findall(r'id="task-team-(\w+)">.*?data-label="Remaining">(\d+)<', home, re.S)
        return dict(cells) | {"quota": "Quota reached" in home}

    assert remaining() == {"t2i": "2", "edit": "2", "quota": False}  # 3 pairs open, 2 allowed
    rate(ann, task), rate(ann, task)
    assert remaining() == {"t2i": "0", "edit": "1", "quota": True}  # the project's 3rd is left
    end = client.post(reverse("task-next", args=[project.slug, task.slug])).content.decode()
    assert "t2i: your quota is reached" in end and "2 pairs of this task" in end
    assert "Next task: " in end  # edit still has room
    rate(ann, edit)
    end = client.post(reverse("task-next", args=[project.slug, edit.slug])).content.decode()
    assert "3 pairs of this project" in end and "Next task: " not in end
    assert remaining() == {"t2i": "0", "edit": "0", "quota": True}


def test_a_quota_below_one_is_refused(lead_client, project):
    ann = member("ann", project)
    membership = Membership.objects.get(user=ann, project=project)
    answer = lead_client.post(
        reverse("member-update", args=[project.slug, membership.pk]),
        {"role": "annotator", "project_quota": "0"},
    )
    assert answer.status_code == 302
    assert any("not changed" in text for text in said(answer))
    membership.refresh_from_db()
    assert membership.project_quota is None


# Releasing a pair in progress


def test_the_lead_releases_a_stuck_pair_to_the_pool(lead_client, project, task):
    Project.objects.filter(pk=project.pk).update(annotators_per_pair=1)
    ann, bea = member("ann", project), member("bea", project)
    held = assignment_claim(ann, task)
    page = lead_client.get(reverse("project-members", args=[project.slug])).content.decode()
    release = reverse("lease-release", args=[project.slug, held.pk])
    assert release in page

    answer = lead_client.post(release)

    assert answer.status_code == 302
    held.refresh_from_db()
    assert held.status == Assignment.Status.EXPIRED
    pairs_bea_got = set()
    while (claimed := rate(bea, task)) is not None:
        pairs_bea_got.add(claimed.pair_id)
    assert held.pair_id in pairs_bea_got  # its only slot went back to the pool
    after = assignment_claim(ann, task)
    assert after is None or after.pair_id != held.pair_id  # never the same pair again


def test_a_release_is_in_the_trail_and_announced_once_it_commits(
    lead_client, lead, project, task, django_capture_on_commit_callbacks
):
    ann = member("ann", project)
    held = assignment_claim(ann, task)
    heard = []
    project_event.connect(
        lambda sender, kind, data, actor, **_: heard.append((kind, data, actor)),
        dispatch_uid="tests.members.released",
        weak=False,
    )
    try:
        with django_capture_on_commit_callbacks(execute=True):
            lead_client.post(reverse("lease-release", args=[project.slug, held.pk]))
    finally:
        project_event.disconnect(dispatch_uid="tests.members.released")
    released = [(data, actor) for kind, data, actor in heard if kind == "pair.released"]
    assert released == [
        ({"assignment": held.pk, "pair": held.pair_id, "task": task.slug, "annotator": "ann"}, lead)
    ]
    entry = AuditEntry.objects.get(project_id=project.pk, object_repr__contains="released")
    assert (entry.kind, entry.actor_id, entry.actor_name) == ("member", lead.pk, lead.username)
    assert "ann" in entry.object_repr and "released" in entry.object_repr
    trail = lead_client.get(reverse("project-audit", args=[project.slug])).content.decode()
    assert entry.object_repr in trail


def test_release_is_scoped_to_the_leads_project_and_to_pairs_in_progress(
    client, lead_client, project, task
):
    ann = member("ann", project)
    held = assignment_claim(ann, task)
    other = Project.objects.create(slug="other", name="Other")
    client.force_login(member("stranger", other, role="lead"))
    assert client.post(reverse("lease-release", args=[other.slug, held.pk])).status_code == 404
    assert client.post(reverse("lease-release", args=[project.slug, held.pk])).status_code == 404
    rating_submit(held.pk, ann, RatingInput(overall=5))
    finished = lead_client.post(reverse("lease-release", args=[project.slug, held.pk]))
    assert finished.status_code == 404
    missing = lead_client.post(reverse("lease-release", args=[project.slug, 999_999]))
    assert missing.status_code == 404
    held.refresh_from_db()
    assert held.status == Assignment.Status.SUBMITTED


def test_the_members_page_has_one_id_per_field(lead_client, project, other_task):
    page = lead_client.get(reverse("project-members", args=[project.slug])).content.decode()
    ids = re.findall(r'\sid="([^"]+)"', page)
    assert len(ids) == len(set(ids)), sorted(i for i in ids if ids.count(i) > 1)
    assert Task.objects.filter(project=project).count() == 2
