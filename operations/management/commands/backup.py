from pathlib import Path

from django.core.management.base import BaseCommand, CommandError
from django.db import connection

from core.media_store import media_store
from operations.backup import BackupError, Database, backup_write


class Command(BaseCommand):
    help = (
        "Write a consistent backup (the database, the media files its rows name, a manifest "
        "of SHA-256 sums) into a new folder; operations/backup.py."
    )

    def add_arguments(self, parser):
        parser.add_argument("--out", required=True, help="a folder that does not exist yet")

    def handle(self, *args, **options):
        database = Database.of(connection.settings_dict)
        live = None
        if database.engine == "sqlite":  # SQLite's backup API reads through this connection
            connection.ensure_connection()
            live = connection.connection
        try:
            manifest = backup_write(Path(options["out"]), database, media_store(), live)
        except BackupError as error:
            raise CommandError(str(error)) from None
        size = manifest["database"]["bytes"] + sum(f["bytes"] for f in manifest["files"])
        self.stdout.write(
            f"backup in {options['out']}: the {database.engine} database and "
            f"{len(manifest['files'])} files, {size:,} bytes"
        )
        if manifest["missing"]:
            self.stderr.write(
                f"{len(manifest['missing'])} files named by rows were not in media storage "
                "(listed under 'missing' in the manifest)"
            )
