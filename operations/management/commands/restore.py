from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand, CommandError
from django.db import connections

from core.media_store import media_store
from operations.backup import BackupError, Database, backup_restore


class Command(BaseCommand):
    help = (
        "Restore a backup folder into an empty, never-migrated database and an empty media "
        "store; every SHA-256 is checked first, and a wrong one restores nothing."
    )
    requires_system_checks = []  # nothing may touch the database before it is restored

    def add_arguments(self, parser):
        parser.add_argument("folder", help="a folder written by `manage.py backup`")

    def handle(self, *args, **options):
        database = Database.of(connections["default"].settings_dict)
        try:
            manifest = backup_restore(Path(options["folder"]), database, media_store())
        except BackupError as error:
            raise CommandError(f"nothing restored: {error}") from None
        self.stdout.write(
            f"restored the {database.engine} database of {manifest['created_at']} and "
            f"{len(manifest['files'])} files into {_where()}"
        )


def _where() -> str:
    store = media_store()
    return str(settings.MEDIA_ROOT) if store.kind == "local" else "the media bucket"
