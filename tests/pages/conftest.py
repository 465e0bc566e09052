"""A lead's site for the browser tests of the pages (accessibility, narrow screens): the
dashboards' rated project (tests/dashboards/conftest.py) with an export, a judge of the
project's own, and the right to create projects, so every page has something to show; an
annotator of it; and everyone the page sweeps sign in as."""

from types import SimpleNamespace

import pytest
from django.contrib.auth.models import Permission, User

from annotation.models import Assignment
from annotation.services.assignments import assignment_claim
from annotation.services.pair_threads import question_answer, question_ask
from annotation.services.ratings import RatingInput, rating_submit
from content.models import Pair
from dashboards.services.saved_views import saved_view_save
from exports.jobs import export_job_start
from exports.models import ExportJob
from imports.models import ImportJob
from judging.models import Judge
from projects.models import Membership, Task
from projects.services.api_tokens import api_token_create, api_token_revoke
from projects.services.invitations import invitation_create
from tests.dashboards.conftest import rated  # noqa: F401  (a fixture)
from tests.factories import queued_pairs
from webhooks.models import Delivery, Destination, Subscription


@pytest.fixture
def lead_site(rated):  # noqa: F811
    project, lead = rated
    export_job_start(project, lead)  # runs in-process: the exports page lists a done job
    Judge.objects.create(name="local-coin", backend="random", project=project)
    lead.user_permissions.add(Permission.objects.get(codename="add_project"))
    # The API tokens page lists one in use (this project only, read-only) and one ended.
    api_token_create(user=lead, name="nightly export", access="read", project=project)
    ended = api_token_create(user=lead, name="old pipeline")
    api_token_revoke(user=lead, token_id=ended.token.pk)
    return project, lead


@pytest.fixture
def annotator(rated, tmp_path):  # noqa: F811
    """An annotator whose home page lists three tasks in two projects: one done (the rated
    project's), one to continue (with a long name), one to start."""
    project, _ = rated
    user = project.memberships.get(user__username="ann1").user
    second = queued_pairs(tmp_path, project_slug="second", task_slug="t2i", count=3)
    Task.objects.filter(pk=second.pk).update(
        name="Text to image, with the long name a lead may well give a task"
    )
    queued_pairs(tmp_path, project_slug="second", task_slug="edit", count=2)
    Membership.objects.create(user=user, project=second.project, role=Membership.Role.ANNOTATOR)
    rating_submit(assignment_claim(user, second).pk, user, RatingInput(overall=3, active_seconds=5))
    return user


@pytest.fixture
def every_role(lead_site, annotator):
    """Everyone the page sweeps sign in as (tests/pages/walks.py), on the lead's site: the lead,
    the annotator `ann1` (annotator fixture, with an e-mail address for a password reset link),
    an operator, and the link of an open invitation for a visitor signed out. The first pair
    has a conversation (ann1's question answered, ann2's waiting), the pair browser a shared
    saved view, the webhooks page a subscription and a failed delivery, the data page a refused
    import, the exports page a failed export and one waiting for a worker: pages show their
    parts filled, not only empty."""
    project, lead = lead_site
    first = Pair.objects.filter(task__project=project).order_by("pk").first()
    asked = {}
    for name in ("ann1", "ann2"):
        user = project.memberships.get(user__username=name).user
        assignment = Assignment.objects.get(pair=first, annotator=user)
        asked[name] = question_ask(
            assignment_id=assignment.pk, user=user, body="Is the left image cropped on purpose?"
        )
    question_answer(thread_id=asked["ann1"].thread_id, lead=lead, body="Yes: rate it as it is.")
    saved_view_save(
        project=project, lead=lead, name="Decided by the rules", shared=True, query="sort=span"
    )
    destination = Destination.objects.create(
        name="pipeline", url="https://hooks.example.org/arbiter", secret_env="HOOK_SECRET",
        all_projects=True,
    )  # fmt: skip
    subscription = Subscription.objects.create(
        project=project, destination=destination, kinds=["pair.decided"]
    )
    Delivery.objects.create(
        subscription=subscription, kind="pair.decided", status=Delivery.Status.FAILED,
        attempts=5, last_status_code=502, last_error="Bad gateway",
    )  # fmt: skip
    ImportJob.objects.create(
        project=project, task_slug="t2i", requested_by=lead, file_name="more-pairs.jsonl",
        status=ImportJob.Status.FAILED, records_checked=3, error_record=3,
        error="missing field prompt_content",
    )  # fmt: skip
    ExportJob.objects.create(
        project=project, requested_by=lead, status=ExportJob.Status.FAILED, error="disk full"
    )
    ExportJob.objects.create(project=project, requested_by=lead)  # waits for a worker
    operator = User.objects.create_superuser("root", email="root@example.org")
    annotator.email = "ann1@example.org"  # a password reset link is mailed to this address
    annotator.save(update_fields=["email"])
    return SimpleNamespace(
        project=project,
        lead=lead,
        annotator=annotator,
        operator=operator,
        invitation=invitation_create(project=project, created_by=lead, note="a new expert").token,
    )
