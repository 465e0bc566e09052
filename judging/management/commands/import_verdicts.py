import json

from django.core.management.base import BaseCommand, CommandError

from content.importing.errors import ImportFailed
from judging.services.score_import import scores_import
from judging.services.verdict_import import verdicts_import


class Command(BaseCommand):
    help = (
        "Import a judge's predictions as verdicts, all or nothing: an MMRB2 prediction file, "
        "or an MJ-Bench scoring-model result file (a pointwise judge's scores)."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--project", required=True)
        parser.add_argument("--task", required=True)
        parser.add_argument("--judge", required=True, help="judge name (created if missing)")
        parser.add_argument(
            "--format", dest="file_format", choices=["mmrb2", "mjbench-scores"], default="mmrb2"
        )
        parser.add_argument(
            "--strict-mmrb2",
            action="store_true",
            help="read an MMRB2 file exactly as MMRB2's compute_accuracy.py does: the first "
            "sample only, exact letters A/B, unknown ids skipped",
        )
        parser.add_argument("--json", action="store_true")

    def handle(self, *args, **options):
        where = {
            "project_slug": options["project"],
            "task_slug": options["task"],
            "judge_name": options["judge"],
        }
        if options["strict_mmrb2"] and options["file_format"] != "mmrb2":
            raise CommandError("--strict-mmrb2 reads MMRB2 prediction files only")
        try:
            if options["file_format"] == "mjbench-scores":
                summary = scores_import(options["file"], **where)
            else:
                summary = verdicts_import(
                    options["file"], strict_mmrb2=options["strict_mmrb2"], **where
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
