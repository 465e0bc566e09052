"""`manage.py init_embedded`: make what the embedded mode keeps in ./var (ARBITER_VAR_DIR):
the folders of the SQLite database, the media and the static files, and the secret key.
`make demo` runs it; it changes nothing that exists, so running it again is harmless."""

import secrets
from pathlib import Path

from django.conf import settings
from django.core.management.base import BaseCommand

from core.media_store import media_store


class Command(BaseCommand):
    requires_system_checks = []  # it makes what a check would miss (the key)
    help = "Create ./var's folders and the embedded secret key (nothing that exists changes)."

    def handle(self, *args, **options):
        database = settings.DATABASES["default"]
        folders = [Path(settings.STATIC_ROOT)]
        if media_store().kind == "local":  # on S3 the bucket is the operator's to create
            folders.append(Path(settings.MEDIA_ROOT))
        if database["ENGINE"].endswith("sqlite3"):
            folders.append(Path(database["NAME"]).parent)
        for folder in folders:
            folder.mkdir(parents=True, exist_ok=True)
        key_file = Path(settings.SECRET_KEY_FILE)
        if key_file.exists():
            self.stdout.write(f"{key_file} exists; kept.")
            return
        key_file.parent.mkdir(parents=True, exist_ok=True)
        key_file.touch(mode=0o600)  # private before the key is in it
        key_file.write_text(secrets.token_urlsafe(64))
        self.stdout.write(f"Wrote a new secret key to {key_file}.")
