"""Keys of DRF's authtoken (one per user, never expiring, kept in clear) become API tokens:
hashed into projects.ApiToken, then deleted from DRF's table, so that the database holds no
usable key in clear. `rest_framework.authtoken` is no longer installed, so its table is read
with plain SQL, when it exists; it stays, empty. A migrated token keeps working for 90 days
(read-write, all of the user's projects), named "migrated DRF token"."""

import hashlib
from datetime import UTC, timedelta

from django.db import migrations
from django.utils import timezone
from django.utils.dateparse import parse_datetime

MIGRATED_DAYS = 90
DRF_TABLE = "authtoken_token"


def hash_drf_tokens(apps, schema_editor):
    connection = schema_editor.connection
    if DRF_TABLE not in connection.introspection.table_names():
        return
    ApiToken = apps.get_model("projects", "ApiToken")
    now = timezone.now()
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT key, user_id, created FROM {DRF_TABLE}")
        rows = cursor.fetchall()
    for key, user_id, created in rows:
        token = ApiToken.objects.create(
            user_id=user_id,
            name="migrated DRF token",
            prefix=key[:8],
            digest=hashlib.sha256(key.encode("utf-8")).hexdigest(),
            access="write",
            expires_at=now + timedelta(days=MIGRATED_DAYS),
        )
        ApiToken.objects.filter(pk=token.pk).update(created_at=_when(created, now))
    with connection.cursor() as cursor:
        cursor.execute(f"DELETE FROM {DRF_TABLE}")


def _when(created, now):
    """DRF's creation time as an aware datetime (SQLite may hand back text or a naive UTC
    time), never after now; now when unreadable."""
    if isinstance(created, str):
        created = parse_datetime(created)
    if created is None:
        return now
    if timezone.is_naive(created):
        created = timezone.make_aware(created, UTC)
    return min(created, now)


class Migration(migrations.Migration):
    dependencies = [("projects", "0007_api_tokens")]

    operations = [migrations.RunPython(hash_drf_tokens, migrations.RunPython.noop, elidable=True)]
