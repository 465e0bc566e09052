"""The Django admin is the operator's alone.

Reproduced before the fix (attack 4): the admin's lists were scoped to a lead's projects but
its foreign-key fields were not, so a lead re-pointed their pair at another project's prompt
and responses, added tasks to other projects, forged ratings and verdicts, and read every
username, model and project name in the drop-downs. Leads now never get in at all.
"""

import json

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.urls import reverse

from annotation.models import Assignment, Rating
from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from judging.models import Judge, Verdict
from judging.services.runs import judge_run_start
from projects.models import Membership, Project, Task
from projects.services.members import membership_set
from tests.factories import member, queued_pairs

pytestmark = pytest.mark.django_db


def _admin_urls(pair, *, addable_only=False) -> list[str]:
    urls = [reverse("admin:index")]
    for model, model_admin in admin.site._registry.items():
        meta = model._meta
        urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_changelist"))
        if not addable_only or model_admin.has_add_permission(_SUPERUSER_REQUEST):
            urls.append(reverse(f"admin:{meta.app_label}_{meta.model_name}_add"))
    urls.append(reverse("admin:content_pair_change", args=[pair.pk]))
    return urls


class _SUPERUSER_REQUEST:
    class user:
        is_superuser = is_active = is_staff = True

        @staticmethod
        def has_perm(perm, obj=None):
            return True


@pytest.fixture
def world(tmp_path):
    mine = queued_pairs(tmp_path, project_slug="mine", count=1).project
    theirs = queued_pairs(tmp_path, project_slug="theirs", count=1).project
    return mine, theirs


@pytest.mark.parametrize("role", ["lead", "annotator", "staff-but-not-superuser"])
def test_only_superusers_enter_the_admin(client, world, role):
    mine, theirs = world
    user = User.objects.create_user("someone", password="pw-123456")
    if role == "staff-but-not-superuser":
        user.is_staff = True
        user.save()
    else:
        membership_set(user, mine, role)
    user.refresh_from_db()
    assert not user.is_staff or role == "staff-but-not-superuser"  # a lead is not staff
    client.force_login(user)
    pair = mine.pairs.get()
    for url in _admin_urls(pair):
        answer = client.get(url)
        assert answer.status_code == 302 and "/admin/login/" in answer["Location"], url
    # The writes that worked before: re-point my pair at their responses, add a task to
    # their project.
    stolen = theirs.pairs.get()
    change = reverse("admin:content_pair_change", args=[pair.pk])
    client.post(change, {"response_a": stolen.response_a_id, "project": theirs.pk})
    client.post(reverse("admin:projects_task_add"), {"project": theirs.pk, "slug": "x"})
    assert Pair.objects.get(pk=pair.pk).response_a_id != stolen.response_a_id
    assert not Task.objects.filter(slug="x").exists()
    # The admin's sign-in form does not let them in either.
    client.logout()
    form = client.post(
        reverse("admin:login"), {"username": "someone", "password": "pw-123456"}, follow=True
    )
    assert form.request["PATH_INFO"] == reverse("admin:login")


def test_a_superuser_administers_everything(client, world):
    mine, _theirs = world
    client.force_login(User.objects.create_superuser("root", password="pw-123456"))
    for url in _admin_urls(mine.pairs.get(), addable_only=True):
        assert client.get(url).status_code == 200, url
    assert Project.objects.count() == 2 and Membership.objects.count() == 0


@pytest.mark.django_db(transaction=True)  # the run's chunks start on commit, in a thread
def test_the_records_services_write_are_view_only_in_the_admin(client, tmp_path, tasks_in_process):
    """Reproduced before: the operator's admin changed a rating's score or deleted it (and a
    verdict, an assignment, a run) while the pair kept its old count and consensus, the
    day's tallies their old count, and the figures their old data version; the expert's
    work was gone without a trace. The admin shows these rows and changes none of them."""
    task = queued_pairs(tmp_path, count=1)
    expert = member("expert", task.project)
    assignment = assignment_claim(expert, task)
    rating = rating_submit(assignment.pk, expert, RatingInput(overall=2, active_seconds=5))
    judge_run_start(Judge.objects.create(name="always-a", backend="always-a"), task.project)
    verdict = Verdict.objects.first()
    stored = (rating.overall, verdict.choice)
    client.force_login(User.objects.create_superuser("root", password="pw-123456"))
    rows = {
        "annotation_rating": rating,
        "annotation_assignment": assignment,
        "judging_verdict": verdict,
        "judging_judgerun": verdict.run,
    }
    for name, row in rows.items():
        change = reverse(f"admin:{name}_change", args=[row.pk])
        assert client.get(change).status_code == 200, name  # the operator still sees it
        assert client.post(change, {"overall": 7, "choice": "B", "status": "x"}).status_code == 403
        delete = reverse(f"admin:{name}_delete", args=[row.pk])
        assert client.post(delete, {"post": "yes"}).status_code == 403, name
        assert client.get(reverse(f"admin:{name}_add")).status_code == 403, name
    rating.refresh_from_db()
    verdict.refresh_from_db()
    assert (rating.overall, verdict.choice) == stored
    assert Rating.objects.count() == 1 and Assignment.objects.count() == 1
    # A pair stays in its project: its ratings and verdicts were made there.
    other = queued_pairs(tmp_path / "other", project_slug="other", count=1).project
    pair = task.pairs.get()
    answer = client.post(
        reverse("admin:content_pair_change", args=[pair.pk]),
        {
            "external_id": "moved",
            "project": other.pk,
            "task": other.tasks.get().pk,
            "status": pair.status,
            "source": pair.source,
            "metadata": json.dumps(pair.metadata),
            "prompt": pair.prompt_id,
            "response_a": pair.response_a_id,
            "response_b": pair.response_b_id,
        },
    )
    assert answer.status_code == 302, answer.context["adminform"].form.errors
    pair.refresh_from_db()
    assert pair.project_id == task.project_id


@pytest.mark.parametrize("name", ["imported-team-1", "Imported-Lead-team"])
def test_the_admin_refuses_a_placeholders_kind_of_name_for_a_person(client, name):
    operator = User.objects.create_superuser("root", password="pw-root-1")
    client.force_login(operator)
    password = "a-long-passphrase-9"
    answer = client.post(
        reverse("admin:auth_user_add"),
        {"username": name, "password1": password, "password2": password},
    )
    assert answer.status_code == 200  # the form again, with the error
    assert "kept for imported ratings" in answer.content.decode()
    assert not User.objects.filter(username=name).exists()
    person = User.objects.create_user("ann")
    change = reverse("admin:auth_user_change", args=[person.pk])
    form = client.get(change).context["adminform"].form
    data = {key: value for key, value in form.initial.items() if value is not None}
    data.update(username=name, date_joined_0="2026-01-01", date_joined_1="00:00:00")
    assert "kept for imported ratings" in client.post(change, data).content.decode()
