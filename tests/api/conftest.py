"""Fixtures of the API tests: two projects with their leads and annotators, an outsider,
judges with verdicts, ratings; API clients authenticated by token."""

import json
from types import SimpleNamespace

import pytest
from django.contrib.auth.models import User
from rest_framework.test import APIClient

from annotation.services.assignments import assignment_claim
from annotation.services.ratings import RatingInput, rating_submit
from judging.prompts import template_save
from judging.services.judges import judge_save
from judging.services.runs import judge_run_start
from judging.services.verdict_import import verdicts_import
from projects.models import Membership
from tests.factories import api_key, member, queued_pairs
from tests.judging.conftest import _tasks_in_process  # noqa: F401 (judge runs in-process)

PASSWORD = "pw-annotate-1"


@pytest.fixture(autouse=True)
def _fresh_login_throttle():
    """Each test starts with no login attempts counted (the throttle lives in the cache,
    which is Redis and outlives a test when REDIS_URL is set)."""
    from django.core.cache import cache

    cache.clear()


def token_header(user, **options) -> dict:
    """The header of a new API token of the user (`options`: api_token_create's)."""
    return {"Authorization": f"Token {api_key(user, **options)}"}


def token_client(user, **options) -> APIClient:
    client = APIClient()
    client.credentials(HTTP_AUTHORIZATION=token_header(user, **options)["Authorization"])
    return client


def rate(user, task, overall=6):
    """Claim the user's next pair in the task and rate it."""
    assignment = assignment_claim(user, task)
    rating_submit(assignment.pk, user, RatingInput(overall=overall))
    return assignment


def import_predictions(folder, task, judge_name, judgement="A"):
    """An MMRB2 prediction file naming `judgement` in both orders for every pair of the task."""
    predictions = {
        external_id: {"forward": [{"judgement": judgement}], "reverse": [{"judgement": "B"}]}
        for external_id in task.pairs.values_list("external_id", flat=True)
    }
    path = folder / f"predictions-{task.project.slug}-{task.slug}.json"
    path.write_text(json.dumps(predictions))
    return verdicts_import(
        path, project_slug=task.project.slug, task_slug=task.slug, judge_name=judge_name
    )


@pytest.fixture
def world(db, tmp_path):
    """Project `alpha` (task t2i, 6 queued pairs: ids `t2i-<i>-secretmodelA-vs-…`) with lead
    `lead_a`, annotators `ann_a` and `ann_a2` (who rated one pair); project `beta` (task
    `edit`, 4 pairs) with `lead_b` and `ann_b` (who rated one pair); `outsider` with no
    membership; the operator's judge `baseline-a` with a pending run on each project, an
    external judge `ext-judge` in each with imported verdicts on every pair, alpha's
    `judge-unused` with nothing, a template `house` in each project."""
    alpha_task = queued_pairs(tmp_path, project_slug="alpha", task_slug="t2i", count=6)
    beta_task = queued_pairs(tmp_path, project_slug="beta", task_slug="edit", count=4)
    alpha, beta = alpha_task.project, beta_task.project
    lead_a = member("lead_a", alpha, role=Membership.Role.LEAD)
    ann_a = member("ann_a", alpha)
    ann_a2 = member("ann_a2", alpha)
    lead_b = member("lead_b", beta, role=Membership.Role.LEAD)
    ann_b = member("ann_b", beta)
    outsider = User.objects.create_user("outsider", password=PASSWORD)
    rate(ann_a2, alpha_task, overall=2)
    rate(ann_b, beta_task, overall=5)
    judge, _ = judge_save("baseline-a", project=None, backend="always-a")
    judge_save("judge-unused", project=alpha, backend="random", sampling={"seed": 1})
    for project in (alpha, beta):  # a template of each project's own
        template_save("house", f"{project.slug}: {{prompt}} {{first}} {{second}}", "json", project)
    run_a = judge_run_start(judge, alpha)  # pending: its chunks wait for a commit
    run_b = judge_run_start(judge, beta)
    import_predictions(tmp_path, alpha_task, "ext-judge")
    import_predictions(tmp_path, beta_task, "ext-judge")
    return SimpleNamespace(
        alpha=alpha,
        beta=beta,
        alpha_task=alpha_task,
        beta_task=beta_task,
        lead_a=lead_a,
        ann_a=ann_a,
        ann_a2=ann_a2,
        lead_b=lead_b,
        ann_b=ann_b,
        outsider=outsider,
        judge=judge,
        run_a=run_a,
        run_b=run_b,
    )


@pytest.fixture
def as_lead(world):
    return token_client(world.lead_a)


@pytest.fixture
def as_annotator(world):
    return token_client(world.ann_a)
