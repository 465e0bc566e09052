"""django-auditlog's `auditlogflush` deletes or truncates every entry; the trail is kept for
good (SECURITY.md), so Arbiter's `manage.py` answers this name with a refusal. `audit` is
listed before `auditlog` in INSTALLED_APPS so that this command wins."""

from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError


class Command(BaseCommand):
    help = "Refused: Arbiter's audit trail cannot be flushed (it is kept with the backups)."

    def add_arguments(self, parser: ArgumentParser) -> None:
        # Accept auditlog's own options, so a scripted call is refused, not misparsed.
        parser.add_argument("-y", "--yes", action="store_true")
        parser.add_argument("-b", "--before-date")
        parser.add_argument("-t", "--truncate", action="store_true")

    def handle(self, *args: Any, **options: Any) -> None:
        raise CommandError(
            "The audit trail cannot be flushed through Arbiter: its entries are kept for good."
        )
