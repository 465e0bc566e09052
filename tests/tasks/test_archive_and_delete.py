"""A lead removes a mistyped task (no pairs: deleted) or puts away one with data (archived:
hidden from annotators, their claims, the members' forms and imports, kept with its data)
and restores it. Only the project's leads may; another project's lead gets a 404."""

import io
import json

import pytest
from django.core.management import CommandError, call_command
from django.db import IntegrityError
from django.urls import reverse
from django.utils import timezone
from rest_framework.test import APIClient

from annotation.models import Rating
from annotation.services.assignments import assignment_claim
from content.importing.errors import ImportFailed
from content.models import Pair
from imports.services.pair_import import pairs_import
from projects.models import Membership, Project, Task
from tests.factories import member, queued_pairs, write_jsonl

pytestmark = [pytest.mark.django_db, pytest.mark.usefixtures("lead_signs_in")]

TEXT_PAIR = {
    "id": "new-1",
    "prompt_content": [["text", "Say hello"]],
    "response_a": {"model_name": "m1", "response_content": [["text", "Hello"]]},
    "response_b": {"model_name": "m2", "response_content": [["text", "Hi"]]},
}


@pytest.fixture
def rated_task(tmp_path):
    return queued_pairs(tmp_path, project_slug="ann", task_slug="t2i", count=2)


@pytest.fixture
def project(rated_task):
    return rated_task.project


def _post(client, name, task, **extra):
    return client.post(reverse(name, args=[task.project.slug, task.slug]), extra)


def test_an_empty_task_is_deleted_from_the_settings_page(client, lead, rated_task):
    typo = Task.objects.create(project=rated_task.project, slug="tti", name="tti")
    page = client.get(reverse("project-settings", args=["ann"])).content.decode()
    assert reverse("task-delete", args=["ann", "tti"]) in page  # offered with its question
    assert "Delete task tti?" in page
    answer = _post(client, "task-delete", typo)
    assert answer.status_code == 302
    assert not Task.objects.filter(slug="tti").exists()
    page = client.get(answer["Location"]).content.decode()
    assert "Task tti deleted." in page


def test_a_task_with_pairs_is_not_deleted_but_can_be_archived(client, lead, rated_task):
    page = client.get(reverse("project-settings", args=["ann"])).content.decode()
    assert reverse("task-delete", args=["ann", "t2i"]) not in page
    assert reverse("task-archive", args=["ann", "t2i"]) in page
    answer = _post(client, "task-delete", rated_task)
    page = client.get(answer["Location"]).content.decode()
    assert "Not deleted: Task t2i holds pairs" in page
    assert Pair.objects.filter(task=rated_task).count() == 2


def test_archiving_hides_the_task_from_annotators_and_restoring_brings_it_back(
    client, lead, rated_task
):
    annotator = member("ann1", rated_task.project)
    viewer = APIClient()
    viewer.force_authenticate(annotator)
    _post(client, "task-archive", rated_task)
    rated_task.refresh_from_db()
    assert rated_task.archived_at is not None and rated_task.archived_by == lead
    assert Pair.objects.filter(task=rated_task).count() == 2  # nothing of it goes

    client.force_login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert reverse("task-next", args=["ann", "t2i"]) not in home
    assert client.get(reverse("task-next", args=["ann", "t2i"])).status_code == 404
    assert viewer.post(f"/api/tasks/{rated_task.pk}/claim/").status_code == 404

    client.force_login(lead)
    page = client.get(reverse("project-settings", args=["ann"])).content.decode()
    assert "archived" in page and "Restore t2i" in page
    _post(client, "task-restore", rated_task)
    rated_task.refresh_from_db()
    assert rated_task.archived_at is None and rated_task.archived_by is None
    client.force_login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert reverse("task-next", args=["ann", "t2i"]) in home
    assert viewer.post(f"/api/tasks/{rated_task.pk}/claim/").status_code == 200


def test_a_member_limited_to_an_archived_task_annotates_nothing_not_everything(
    client, lead, rated_task, tmp_path
):
    other = queued_pairs(tmp_path, project_slug="ann", task_slug="edit", count=1)
    annotator = member("ann1", rated_task.project)
    Membership.objects.get(user=annotator).tasks.set([rated_task])
    _post(client, "task-archive", rated_task)
    client.force_login(annotator)
    home = client.get(reverse("home")).content.decode()
    assert reverse("task-next", args=["ann", "t2i"]) not in home
    assert reverse("task-next", args=["ann", other.slug]) not in home


def test_the_members_page_offers_archived_tasks_only_where_a_member_has_them(
    client, lead, rated_task, tmp_path
):
    queued_pairs(tmp_path, project_slug="ann", task_slug="edit", count=1)
    limited = member("ann1", rated_task.project)
    member("ann2", rated_task.project)
    Membership.objects.get(user=limited).tasks.set([rated_task])
    _post(client, "task-archive", rated_task)
    page = client.get(reverse("project-members", args=["ann"])).content.decode()
    # Ticked for the member limited to it (saving their role keeps it), nowhere else.
    assert page.count(f'name="tasks" value="{rated_task.pk}"') == 1
    assert "t2i (archived)" in page
    membership = Membership.objects.get(user=limited)
    answer = client.post(
        reverse("member-update", args=["ann", membership.pk]),
        {"role": "annotator", "tasks": [rated_task.pk]},
    )
    assert answer.status_code == 302
    assert list(membership.tasks.all()) == [rated_task]


def test_deleting_the_only_task_of_a_member_is_refused(client, lead, rated_task):
    typo = Task.objects.create(project=rated_task.project, slug="tti", name="tti")
    annotator = member("ann1", rated_task.project)
    Membership.objects.get(user=annotator).tasks.set([typo])
    answer = _post(client, "task-delete", typo)
    page = client.get(answer["Location"]).content.decode()
    assert "Not deleted: Task tti is the only task of 1 member" in page
    assert Task.objects.filter(slug="tti").exists()


def test_imports_refuse_an_archived_task(tmp_path, rated_task):
    Task.objects.filter(pk=rated_task.pk).update(archived_at=timezone.now())
    path = write_jsonl(tmp_path / "more.jsonl", [TEXT_PAIR])
    with pytest.raises(ImportFailed, match="task 't2i' is archived: restore it"):
        pairs_import(path, project_slug="ann", task_slug="t2i")
    assert Pair.objects.filter(task=rated_task).count() == 2


def test_who_archived_is_recorded_only_with_when(rated_task, lead):
    with pytest.raises(IntegrityError):
        Task.objects.filter(pk=rated_task.pk).update(archived_by=lead, archived_at=None)


@pytest.mark.parametrize("action", ["task-delete", "task-archive", "task-restore"])
def test_another_projects_lead_and_an_annotator_cannot_touch_the_task(client, rated_task, action):
    other = Project.objects.create(slug="other", name="Other")
    client.force_login(member("intruder", other, role="lead"))
    url = reverse(action, args=["ann", "t2i"])
    assert client.post(url).status_code == 404
    # Naming the intruder's own project with this project's task: the same 404.
    assert client.post(reverse(action, args=["other", "t2i"])).status_code == 404
    client.force_login(member("ann1", rated_task.project))
    assert client.post(url).status_code == 403
    assert client.get(url).status_code in (403, 405)
    rated_task.refresh_from_db()
    assert rated_task.archived_at is None


def test_exports_keep_an_archived_task_unless_told_to_leave_it_out(tmp_path, rated_task):
    queued_pairs(tmp_path, project_slug="ann", task_slug="edit", count=1)
    Task.objects.filter(pk=rated_task.pk).update(archived_at=timezone.now())

    def exported(*flags) -> set[str]:
        out = io.StringIO()
        folder = tmp_path / f"export-{len(flags)}"
        arguments = ["--project", "ann", "--out", str(folder), "--include-dropped", "--json"]
        call_command("export_dataset", *arguments, *flags, stdout=out)
        return set(json.loads(out.getvalue())["tasks"])

    assert exported() == {"t2i", "edit"}
    assert exported("--without-archived") == {"edit"}


def test_the_api_lists_an_archived_task_to_its_leads_only(rated_task, lead):
    annotator = member("ann1", rated_task.project)
    Task.objects.filter(pk=rated_task.pk).update(archived_at=timezone.now())
    for user, seen in ((lead, 1), (annotator, 0)):
        api = APIClient()
        api.force_authenticate(user)
        assert api.get("/api/tasks/").json()["count"] == seen
        assert api.get(f"/api/tasks/{rated_task.pk}/").status_code == (200 if seen else 404)


def test_an_archived_tasks_candidates_are_not_queued(client, lead, rated_task, tmp_path):
    other = queued_pairs(tmp_path, project_slug="ann", task_slug="edit", count=1)
    Pair.objects.update(status=Pair.Status.CANDIDATE)
    Task.objects.filter(pk=rated_task.pk).update(archived_at=timezone.now())
    answer = client.post(reverse("project-queue", args=["ann"]), {"task": "t2i"})
    page = client.get(answer["Location"]).content.decode()
    assert "Not queued: task t2i is archived" in page
    client.post(reverse("project-queue", args=["ann"]))  # the whole project: the others only
    queued = set(Pair.objects.filter(status=Pair.Status.QUEUED).values_list("task", flat=True))
    assert queued == {other.pk}
    with pytest.raises(CommandError, match="task t2i is archived"):
        call_command("queue_pairs", "--project", "ann", "--task", "t2i", stdout=io.StringIO())


def test_the_task_page_says_it_is_archived_and_offers_the_way_back(client, lead, rated_task):
    page = client.get(reverse("task-edit", args=["ann", "t2i"])).content.decode()
    assert "2 pairs. A task with pairs can be archived (and restored), not deleted." in page
    assert reverse("task-archive", args=["ann", "t2i"]) in page
    _post(client, "task-archive", rated_task)
    page = client.get(reverse("task-edit", args=["ann", "t2i"])).content.decode()
    assert "This task is archived" in page and "Restore t2i" in page
    typo = Task.objects.create(project=rated_task.project, slug="tti", name="tti")
    page = client.get(reverse("task-edit", args=["ann", typo.slug])).content.decode()
    assert "Delete task tti?" in page


def test_an_annotator_rating_when_the_task_is_archived_gets_no_next_pair(client, lead, rated_task):
    annotator = member("ann1", rated_task.project)
    client.force_login(annotator)
    claim = client.post(reverse("task-next", args=["ann", "t2i"]))
    assignment_url = claim["Location"]
    Task.objects.filter(pk=rated_task.pk).update(archived_at=timezone.now())
    answer = client.post(assignment_url, {"overall": "3", "active_seconds": "9"})
    assert answer.status_code == 302
    assert Rating.objects.filter(annotator=annotator).count() == 1  # the pair held is finished
    assert answer["Location"] == reverse("home")  # not another pair, nor a task page gone
    home = client.get(answer["Location"]).content.decode()
    assert "Task t2i was archived by a lead: no more pairs in it." in home
    assert assignment_claim(annotator, Task.objects.get(pk=rated_task.pk)) is None
