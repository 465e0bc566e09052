"""Upgrading a database made before the core app was split into projects, content and
annotation: the tables stay where they were, every row and link survives, and the rights
granted on the moved models (a lead's `add_project`) move with their content types."""

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import connection
from django.db.migrations.executor import MigrationExecutor

from annotation.models import Rating
from content.models import Pair
from projects.models import Membership, Project

pytestmark = pytest.mark.django_db(transaction=True)

MOVED = {
    "projects": ["project", "task", "membership", "invitation", "placeholderaccount"],
    "content": ["asset", "generator", "prompt", "response", "pair"],
}

# The split's own migrations (later ones, such as new apps' tables, are not its business).
THE_SPLIT = [
    ("projects", "0001_initial"),
    ("content", "0001_initial"),
    ("annotation", "0017_project_and_content_apps"),
    ("judging", "0015_project_and_content_apps"),
    ("exports", "0004_project_and_content_apps"),
    ("dashboards", "0002_project_and_content_apps"),
]


@pytest.fixture
def before_the_split():
    """The schema and content types as they were before the split, and every migration again
    afterwards (for the next tests on this database)."""
    executor = MigrationExecutor(connection)
    executor.migrate([("projects", None)])  # and all that depends on it: content, the moves
    executor.loader.build_graph()
    yield executor.loader.project_state([("annotation", "0016_placeholder_accounts")]).apps
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())


def _old_database(old):
    """What a database of the old layout holds: a project, a task, a lead granted the right to
    create projects, an annotator limited to the task, a pair and its rating."""
    project = old.get_model("annotation", "Project").objects.create(slug="p", name="P")
    task = old.get_model("annotation", "Task").objects.create(project=project, slug="t2i", name="T")
    user_model = old.get_model("auth", "User")
    lead = user_model.objects.create(username="lead")
    content_type = old.get_model("contenttypes", "ContentType")
    old_type = content_type.objects.get(app_label="annotation", model="project")
    permission = old.get_model("auth", "Permission").objects.get(
        content_type=old_type, codename="add_project"
    )
    lead.user_permissions.add(permission)
    annotator = user_model.objects.create(username="ann")
    membership = old.get_model("annotation", "Membership").objects.create(
        user=annotator, project=project, role="annotator"
    )
    membership.tasks.add(task)
    prompt = old.get_model("annotation", "Prompt").objects.create(
        project=project, fingerprint="f", content=[["text", "a cat"]]
    )
    generator = old.get_model("annotation", "Generator").objects.create(name="g")
    response = old.get_model("annotation", "Response")
    pair = old.get_model("annotation", "Pair").objects.create(
        project=project,
        task=task,
        external_id="x1",
        prompt=prompt,
        response_a=response.objects.create(generator=generator, content=[["text", "a"]]),
        response_b=response.objects.create(generator=generator, content=[["text", "b"]]),
        status="queued",
    )
    assignment = old.get_model("annotation", "Assignment").objects.create(
        pair=pair, annotator=annotator, status="submitted"
    )
    old.get_model("annotation", "Rating").objects.create(
        assignment=assignment, pair=pair, annotator=annotator, scale=7, overall=2
    )
    return old_type.pk, pair.pk


def test_an_old_database_migrates_forward_with_its_rows_links_and_rights(before_the_split):
    tables = set(connection.introspection.table_names())
    assert "annotation_project" in tables and "annotation_pair" in tables
    assert not any(name.startswith(("projects_", "content_")) for name in tables)
    old_type_id, pair_id = _old_database(before_the_split)

    executor = MigrationExecutor(connection)
    executor.migrate(THE_SPLIT)
    assert set(connection.introspection.table_names()) == tables  # no table made or dropped
    executor = MigrationExecutor(connection)
    executor.migrate(executor.loader.graph.leaf_nodes())  # and what came after, for the ORM
    pair = Pair.objects.select_related("project", "task", "prompt").get(pk=pair_id)
    assert (pair.project.slug, pair.task.slug, pair.prompt.content) == (
        "p",
        "t2i",
        [["text", "a cat"]],
    )
    assert Rating.objects.get(pair=pair).overall == 2
    membership = Membership.objects.get(user__username="ann", project=pair.project)
    assert list(membership.tasks.values_list("slug", flat=True)) == ["t2i"]
    assert ContentType.objects.get_for_model(Project).pk == old_type_id
    assert User.objects.get(username="lead").has_perm("projects.add_project")
    for app, models in MOVED.items():
        assert ContentType.objects.filter(app_label=app, model__in=models).count() == len(models)
        assert not ContentType.objects.filter(app_label="annotation", model__in=models).exists()
