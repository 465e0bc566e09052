"""On PostgreSQL the table itself refuses UPDATE and DELETE of an audit entry, whoever asks
(a shell, a raw query, a bug): a trigger raises. TRUNCATE (the test suite's flush) and INSERT
stay; pg_restore writes with COPY. SQLite has no such guard: the model and the admin refuse."""

from django.db import migrations

FORWARD = """
CREATE FUNCTION audit_entry_immutable() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit entries are never changed or deleted' USING ERRCODE = 'P0001';
END;
$$;
CREATE TRIGGER audit_entry_immutable
    BEFORE UPDATE OR DELETE ON audit_auditentry
    FOR EACH ROW EXECUTE FUNCTION audit_entry_immutable();
"""

BACKWARD = """
DROP TRIGGER IF EXISTS audit_entry_immutable ON audit_auditentry;
DROP FUNCTION IF EXISTS audit_entry_immutable();
"""


def forward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(FORWARD)


def backward(apps, schema_editor):
    if schema_editor.connection.vendor == "postgresql":
        schema_editor.execute(BACKWARD)


class Migration(migrations.Migration):
    dependencies = [("audit", "0001_initial")]

    operations = [migrations.RunPython(forward, backward)]
