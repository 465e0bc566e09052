"""`import_pairs`. One format, MJ-Bench's bias files, brings judges' scores along with the
pairs (judging/services/bias_import.py): the imports app sits above judging for it."""

import json

from django.core.management.base import BaseCommand, CommandError
from django.db import transaction

from content.importing.errors import ImportFailed
from content.importing.formats import FORMATS
from content.importing.mjbench_bias import BIAS_FORMAT
from imports.services.pair_import import pairs_import
from judging.services.bias_import import bias_scores_import


class Command(BaseCommand):
    help = (
        "Import pairs into a project's task, all or nothing. Re-importing records that exist "
        "with the same content does nothing; an existing id with other content is an error."
    )

    def add_arguments(self, parser):
        parser.add_argument("file")
        parser.add_argument("--project", required=True, help="project slug (created if missing)")
        parser.add_argument("--task", required=True, help="task slug (created if missing)")
        parser.add_argument(
            "--format",
            choices=[*FORMATS, BIAS_FORMAT],
            default="native",
            dest="file_format",
            help="native (JSONL, also Arbiter's export), mmrb2, mjbench, parquet (Arbiter's "
            "export, MMRB2's or MJ-Bench's Hugging Face layout, images inside the file), or "
            "mjbench-bias (an MJ-Bench bias file: pairs and every judge's scores)",
        )
        parser.add_argument(
            "--judges",
            help="mjbench-bias: the score columns to import as judges, comma-separated "
            "(default: every column with a number)",
        )
        parser.add_argument(
            "--images", help="folder holding the images the records name (not for parquet)"
        )
        parser.add_argument(
            "--as-candidates",
            action="store_true",
            help="put labelled records into the annotation pipeline instead of keeping them",
        )
        parser.add_argument("--json", action="store_true", help="print a JSON summary")

    def handle(self, *args, **options):
        bias = options["file_format"] == BIAS_FORMAT
        if options["judges"] and not bias:
            raise CommandError(f"--judges is for --format {BIAS_FORMAT} only")
        judges = [name.strip() for name in (options["judges"] or "").split(",") if name.strip()]
        try:
            with transaction.atomic():  # a bias file's pairs and scores land together
                summary = pairs_import(
                    options["file"],
                    project_slug=options["project"],
                    task_slug=options["task"],
                    file_format=options["file_format"],
                    images_dir=options["images"],
                    as_candidates=options["as_candidates"],
                )
                scores = (
                    bias_scores_import(
                        options["file"],
                        project_slug=options["project"],
                        task_slug=options["task"],
                        judges=judges or None,
                    )
                    if bias
                    else None
                )
        except ImportFailed as exc:
            raise CommandError(f"import failed, nothing written: {exc}") from None
        result = summary.as_dict()
        if scores is not None:
            result["judges"] = scores["judges"]
        if options["json"]:
            self.stdout.write(json.dumps(result))
            return
        self.stdout.write(
            f"Imported {result['pairs']} pairs ({result['unchanged']} unchanged) into "
            f"{summary.project}/{summary.task}: {result['prompts']['new']} new prompts, "
            f"{result['images']['new']} new images ({result['images']['reused']} reused), "
            f"{result['ratings']} ratings in {result['seconds']} s."
        )
        if summary.in_other_tasks:
            self.stdout.write(
                f"{summary.in_other_tasks} records were already in another task of the project "
                "with the same content: each stays in its first task (a pair has one task)."
            )
        if scores is not None:
            named = ", ".join(f"{name} ({n} pairs)" for name, n in scores["judges"].items())
            self.stdout.write(f"Pointwise judges from the score columns: {named}.")
        if summary.derived_ids:
            self.stdout.write(
                f"{summary.derived_ids} records had no id: each got mjbench-<hash of its caption "
                "and image names>, the same on every import."
            )
