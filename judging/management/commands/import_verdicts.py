import json

from django.core.management.base import BaseCommand, CommandError

from annotation.importing.errors import ImportFailed
from judging.services.verdict_import import verdicts_import


class Command(BaseCommand):
    help = "Import a judge's predictions (MMRB2 prediction file) as verdicts, all or nothing."

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--project", required=True)
        parser.add_argument("--task", required=True)
        parser.add_argument("--judge", required=True, help="judge name (created if missing)")
        parser.add_argument("--format", choices=["mmrb2"], default="mmrb2")
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        try:
            summary = verdicts_import(
                options["file"],
                project_slug=options["project"],
                task_slug=options["task"],
                judge_name=options["judge"],
            )
        except ImportFailed as exc:
            raise CommandError(f"import failed, nothing written: {exc}") from None
        if options["json"]:
            self.stdout.write(json.dumps(summary))
        else:
            self.stdout.write(
                f"Imported {summary['verdicts']} verdicts of {summary['judge']} on "
                f"{summary['pairs']} pairs of {summary['project']}/{summary['task']}."
            )
