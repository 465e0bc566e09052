"""No one changes or deletes an entry through Arbiter: the model and its querysets refuse, the
admin is read-only (even for the operator), and on PostgreSQL the table's trigger refuses an
UPDATE or DELETE sent by any client. An entry outlives its actor's account."""

import pytest
from django.contrib.auth.models import User
from django.contrib.contenttypes.models import ContentType
from django.db import DatabaseError, connection, transaction

from audit.models import AuditEntry, AuditKind, EntryRefused
from projects.models import Project

pytestmark = pytest.mark.django_db


@pytest.fixture
def entry():
    actor = User.objects.create_user("boss", password="pw-boss-1")
    return AuditEntry.objects.create(
        content_type=ContentType.objects.get_for_model(Project),
        object_pk="1",
        object_repr="mine",
        action=AuditEntry.Action.UPDATE,
        kind=AuditKind.PROJECT,
        project_id=1,
        actor=actor,
        actor_name="boss",
        changes={"lease_minutes": ["30", "45"]},
    )


def _unchanged(entry):
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert (stored.object_repr, stored.changes) == ("mine", {"lease_minutes": ["30", "45"]})


def test_the_model_and_its_querysets_refuse_to_change_or_delete_an_entry(entry):
    entry.object_repr = "forged"
    with pytest.raises(EntryRefused):
        entry.save()
    with pytest.raises(EntryRefused):
        entry.delete()
    with pytest.raises(EntryRefused):
        AuditEntry.objects.filter(pk=entry.pk).update(object_repr="forged")
    with pytest.raises(EntryRefused):
        AuditEntry.objects.filter(pk=entry.pk).delete()
    _unchanged(entry)


def test_the_admin_shows_entries_to_the_operator_but_cannot_add_change_or_delete(client, entry):
    client.force_login(User.objects.create_superuser("root", password="pw-root-1"))
    base = "/admin/audit/auditentry/"
    assert client.get(base).status_code == 200
    assert "mine" in client.get(base).content.decode()
    change = f"{base}{entry.pk}/change/"
    page = client.get(change)
    assert page.status_code == 200 and 'name="_save"' not in page.content.decode()
    assert client.post(change, {"object_repr": "forged"}).status_code == 403
    assert client.post(f"{base}{entry.pk}/delete/", {"post": "yes"}).status_code == 403
    assert client.get(f"{base}add/").status_code == 403
    bulk = client.post(base, {"action": "delete_selected", "_selected_action": [entry.pk]})
    assert bulk.status_code in (200, 302)
    _unchanged(entry)


def test_deleting_the_actors_account_leaves_the_entry_and_its_name(entry):
    User.objects.filter(username="boss").delete()
    stored = AuditEntry.objects.get(pk=entry.pk)
    assert stored.actor_name == "boss" and stored.actor_id is not None  # kept as it was


@pytest.mark.postgres
@pytest.mark.django_db(transaction=True)
def test_on_postgresql_the_table_refuses_update_and_delete_from_any_client(entry):
    for statement in (
        "UPDATE audit_auditentry SET object_repr = 'forged' WHERE id = %s",
        "DELETE FROM audit_auditentry WHERE id = %s",
    ):
        with (
            pytest.raises(DatabaseError, match="never changed or deleted"),
            transaction.atomic(),
            connection.cursor() as cursor,
        ):
            cursor.execute(statement, [entry.pk])
    _unchanged(entry)


@pytest.mark.parametrize("options", [["--yes"], ["--yes", "--truncate"]])
def test_auditlogs_flush_command_is_refused_and_the_entries_stay(entry, options):
    from django.core.management import CommandError, call_command

    with pytest.raises(CommandError, match="cannot be flushed"):
        call_command("auditlogflush", *options)
    assert AuditEntry.objects.filter(pk=entry.pk).exists()
