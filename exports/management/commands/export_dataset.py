import json
from argparse import ArgumentParser
from typing import Any

from django.core.management.base import BaseCommand, CommandError

from exports.errors import ExportInvalid
from exports.writer import FILE_FORMATS, export_dataset
from projects.models import Project


class Command(BaseCommand):
    help = (
        "Export a project's consensus dataset (kept pairs, anonymised ratings, images) into an "
        "empty folder: JSONL with image files, Parquet with images embedded, MMRB2's benchmark "
        "files, or preference pairs (prompt, chosen, rejected) for reward models and DPO."
    )

    def add_arguments(self, parser: ArgumentParser) -> None:
        parser.add_argument("--project", required=True, help="project slug")
        parser.add_argument("--out", required=True, help="folder to create (absent or empty)")
        parser.add_argument("--format", choices=FILE_FORMATS, default="jsonl", dest="file_format")
        parser.add_argument("--task", help="export this task only")
        parser.add_argument("--include-dropped", action="store_true", help="dropped pairs too")
        parser.add_argument("--with-verdicts", action="store_true", help="add the judges' verdicts")
        parser.add_argument(
            "--without-archived",
            action="store_true",
            help="leave out the archived tasks (exported by default: they keep their data)",
        )
        parser.add_argument("--json", action="store_true", help="print a JSON summary")

    def handle(self, *args: Any, **options: Any) -> None:
        project = Project.objects.filter(slug=options["project"]).first()
        if project is None:
            raise CommandError(f"project {options['project']!r} does not exist")
        try:
            summary = export_dataset(
                project,
                options["out"],
                file_format=options["file_format"],
                task_slug=options["task"],
                include_dropped=options["include_dropped"],
                with_verdicts=options["with_verdicts"],
                include_archived=not options["without_archived"],
            )
        except ExportInvalid as exc:
            raise CommandError(f"export refused, nothing written: {exc}") from None
        except OSError as exc:  # a full disk, say: the partial export was removed
            raise CommandError(f"export failed, nothing written: {exc}") from None
        result = summary.as_dict()
        tasks = len(result["tasks"])
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(
            f"Exported {result['pairs']} pairs, {result['ratings']} ratings and "
            f"{result['images']} images of {project.slug} ({tasks} task{'s' * (tasks != 1)}, "
            f"{result['format']}) into {result['out']}: {result['files']} files in "
            f"{result['seconds']} s."
        )
