"""Upgrading a database of global judges: what a lead typed becomes an operator's connection
that no project may use until the operator allows it, and leads leave the admin."""

import pytest

from tests.migration_steps import latest_schema_after, migrate_to  # noqa: F401  (a fixture)

# A real transaction: migrations cannot run inside the test's.
pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("latest_schema_after"),
]

BEFORE = [("judging", "0003_verdict_covering_index"), ("annotation", "0005_export_job")]
AFTER = [("judging", "0006_connections_constraints"), ("annotation", "0006_leads_leave_the_admin")]


def test_global_judges_become_the_operators_with_unallowed_connections():
    old = migrate_to(BEFORE)
    project = old.get_model("annotation", "Project").objects.create(slug="p", name="P")
    user_model = old.get_model("auth", "User")
    group = old.get_model("auth", "Group").objects.create(name="Leads")
    lead = user_model.objects.create(username="lead", is_staff=True)
    lead.groups.add(group)
    user_model.objects.create(username="root", is_staff=True, is_superuser=True)
    judge = old.get_model("judging", "Judge")
    judge.objects.create(
        name="evil", backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
        api_key_env="SECRET_KEY", concurrency=32767, timeout_seconds=86400,
        sampling={"temperature": 0, "model": "o1-pro", "n": 128, "max_tokens": 10**9},
    )  # fmt: skip
    judge.objects.create(
        name="same", backend="openai", model="m", base_url="http://127.0.0.1:9/v1",
        api_key_env="SECRET_KEY",
    )  # fmt: skip
    judge.objects.create(name="coin", backend="random")
    template = old.get_model("judging", "PromptTemplate")
    template.objects.create(name="mmrb2-t2i", version=1, answer_format="json", body="poisoned")
    template.objects.create(name="house", version=1, answer_format="json", body="v1")
    template.objects.create(name="house", version=2, answer_format="json", body="v2")

    new = migrate_to(AFTER)
    judges = {j.name: j for j in new.get_model("judging", "Judge").objects.all()}
    assert all(j.project_id is None for j in judges.values())  # the operator's now
    assert judges["evil"].connection_id == judges["same"].connection_id
    assert judges["coin"].connection_id is None
    assert (judges["evil"].concurrency, judges["evil"].timeout_seconds) == (256, 600)
    assert judges["evil"].sampling == {"temperature": 0}  # nothing else reaches the request
    migrated = new.get_model("judging", "Connection").objects.get()
    assert migrated.api_key_env == "SECRET_KEY" and not migrated.all_projects
    assert not migrated.projects.exists()  # no project calls it before the operator says so
    copies = new.get_model("judging", "PromptTemplate").objects.filter(project_id=project.pk)
    assert [(t.name, t.version, t.body) for t in copies] == [("house", 1, "v2")]
    users = new.get_model("auth", "User").objects
    assert not users.get(username="lead").is_staff
    assert users.get(username="root").is_staff
    assert not new.get_model("auth", "Group").objects.filter(name="Leads").exists()
